#include "ladder/server/pending_response.h"

namespace ladder::server {

namespace {

class PendingCompletion final : public PendingBody {
public:
    PendingCompletion(std::shared_ptr<CompletionJob> job,
                      std::function<std::string(const CompletionJob&)> render)
        : job_(std::move(job)), render_(std::move(render)) {}

    void start(std::function<void()> wake) override { job_->on_output(std::move(wake)); }
    bool poll() override { return job_->collect(); }
    std::string render() override { return render_(*job_); }
    void cancel() override { job_->abort(); }

private:
    std::shared_ptr<CompletionJob> job_;
    std::function<std::string(const CompletionJob&)> render_;
};

}  // namespace

void start_pending_response(HttpResponse& response, std::shared_ptr<CompletionJob> job,
                            std::function<std::string(const CompletionJob&)> render) {
    response.status = 200;
    response.set_header("Content-Type", "application/json");
    response.pending = std::make_shared<PendingCompletion>(std::move(job), std::move(render));
}

}  // namespace ladder::server
