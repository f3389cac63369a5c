// GET /metrics: Prometheus text (ServerMetrics), open like vLLM's, so a
// scraper needs no key.
#include "ladder/server/routes.h"

namespace ladder::server {

void add_metrics_routes(Router& router, ServerContext& context) {
    router.get(
        "/metrics", Router::Access::Public, [&context](const HttpRequest&, HttpResponse& response) {
            response.set_content(
                context.metrics.render(context.engine.stats(), context.config.served_model_name),
                "text/plain; version=0.0.4; charset=utf-8");
        });
}

}  // namespace ladder::server
