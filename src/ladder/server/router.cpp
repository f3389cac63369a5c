#include "ladder/server/router.h"

#include <cstdio>

#include "ladder/server/auth.h"
#include "ladder/server/http_io.h"

namespace ladder::server {

Router::Router(httplib::Server& server, std::span<const ApiKey> keys)
    : server_(server), keys_(keys) {}

Router::Handler Router::guarded(Access access, Handler handler) const {
    return [this, access, handler = std::move(handler)](const httplib::Request& request,
                                                        httplib::Response& response) {
        try {
            if (access == Access::ApiKey)
                authenticate(keys_, request.get_header_value("Authorization"));
            handler(request, response);
        } catch (const ApiError& error) {
            send_error(response, error);
        } catch (const util::InputError& error) {
            send_error(response, ApiError(400, "invalid_request_error", error.what()));
        } catch (const nlohmann::json::exception& error) {
            // Only a request's JSON can be of the wrong shape: a safety net
            // for a check the parsers missed, still the client's 400.
            send_error(response, ApiError(400, "invalid_request_error",
                                          std::string("malformed request: ") + error.what()));
        } catch (const std::exception& error) {
            // Input never lands here (it is an InputError); this is our bug.
            std::fprintf(stderr, "ladder serve: internal error on %s %s: %s\n",
                         request.method.c_str(), request.path.c_str(), error.what());
            send_error(response, ApiError(500, "internal_error",
                                          std::string("internal error: ") + error.what()));
        }
    };
}

void Router::get(const std::string& path, Access access, Handler handler) {
    routes_.push_back({std::regex(path), "GET"});
    server_.Get(path, guarded(access, std::move(handler)));
}

void Router::post(const std::string& path, Access access, Handler handler) {
    routes_.push_back({std::regex(path), "POST"});
    server_.Post(path, guarded(access, std::move(handler)));
}

std::vector<std::string> Router::methods_for(const std::string& path) const {
    std::vector<std::string> methods;
    for (const Route& route : routes_) {
        if (std::regex_match(path, route.pattern)) methods.push_back(route.method);
    }
    return methods;
}

}  // namespace ladder::server
