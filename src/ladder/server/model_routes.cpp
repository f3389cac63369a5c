// GET /v1/models and /v1/models/{id}: the one model this server runs.
// GET /health: 200 while serving, 503 once draining (a load balancer stops
// sending new work then).
#include "ladder/server/completion_handler.h"
#include "ladder/server/http_io.h"
#include "ladder/server/routes.h"

namespace ladder::server {

namespace {

using json = nlohmann::json;

json model_json(const ServerContext& context) {
    return {{"id", context.config.served_model_name},
            {"object", "model"},
            {"created", context.started_unix_seconds},
            {"owned_by", "ladder"},
            {"max_model_len", context.engine.kv_plan().max_model_len}};
}

}  // namespace

void add_model_routes(Router& router, ServerContext& context) {
    router.get("/v1/models", Router::Access::ApiKey,
               [&context](const HttpRequest&, HttpResponse& response) {
                   send_json(response, 200,
                             {{"object", "list"}, {"data", json::array({model_json(context)})}});
               });
    router.get(R"(/v1/models/(.+))", Router::Access::ApiKey,
               [&context](const HttpRequest& request, HttpResponse& response) {
                   require_served_model(context.config, request.path_params.at(0));
                   send_json(response, 200, model_json(context));
               });
    router.get(
        "/health", Router::Access::Public, [&context](const HttpRequest&, HttpResponse& response) {
            const bool draining = context.admission.closed();
            send_json(response, draining ? 503 : 200, {{"status", draining ? "draining" : "ok"}});
        });
}

}  // namespace ladder::server
