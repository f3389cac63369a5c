#include "ladder/server/router.h"

#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "ladder/server/auth.h"
#include "ladder/server/http_io.h"

namespace ladder::server {

namespace {

std::string join(const std::vector<std::string>& items, const char* separator) {
    std::string out;
    for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
    return out;
}

}  // namespace

Router::Router(std::span<const ApiKey> keys, BrowserPolicy policy)
    : keys_(keys), policy_(std::move(policy)) {}

void Router::add(const std::string& path, const char* method, Access access, Handler handler) {
    const bool on_event_loop = std::string_view(method) == "GET";
    routes_.push_back({std::regex(path), method, access, std::move(handler), on_event_loop});
}

void Router::get(const std::string& path, Access access, Handler handler) {
    add(path, "GET", access, std::move(handler));
}

void Router::post(const std::string& path, Access access, Handler handler) {
    add(path, "POST", access, std::move(handler));
}

std::vector<std::string> Router::methods_for(const std::string& path) const {
    std::vector<std::string> methods;
    for (const Route& route : routes_) {
        if (std::regex_match(path, route.pattern)) methods.push_back(route.method);
    }
    return methods;
}

const Router::Route* Router::match(HttpRequest& request, HttpResponse& answer) const {
    // HEAD is GET without the body (the transport drops it).
    const std::string method = request.method == "HEAD" ? "GET" : request.method;
    for (const Route& route : routes_) {
        std::smatch groups;
        if (route.method == method && std::regex_match(request.path, groups, route.pattern)) {
            request.path_params.assign(groups.begin() + 1, groups.end());
            return &route;
        }
    }
    const std::vector<std::string> methods = methods_for(request.path);
    if (methods.empty()) {
        throw ApiError(404, "invalid_request_error",
                       fmt::format("no route {} {}", request.method, request.path), "",
                       "not_found");
    }
    if (request.method == "OPTIONS") {  // not a preflight: what may be done here
        answer.status = 204;
        answer.set_header("Allow", join(methods, ", ") + ", OPTIONS");
        return nullptr;
    }
    answer.set_header("Allow", join(methods, ", "));
    throw ApiError(405, "invalid_request_error",
                   fmt::format("{} is not allowed on {}: use {}", request.method, request.path,
                               join(methods, " or ")),
                   "", "method_not_allowed");
}

const Router::Route* Router::screen(HttpRequest& request, HttpResponse& answer) const {
    const OriginCheck origin = check_origin(request, policy_);
    try {
        check_host(request, policy_);
        if (origin == OriginCheck::Refused) refuse_origin(request);
        if (is_preflight(request)) {
            const std::vector<std::string> methods = methods_for(request.path);
            if (methods.empty()) {
                throw ApiError(404, "invalid_request_error",
                               fmt::format("no route {}", request.path), "", "not_found");
            }
            answer_preflight(request, methods, answer);
            return nullptr;
        }
        const Route* route = match(request, answer);
        if (route == nullptr) return nullptr;
        check_json_content_type(request);
        if (route->access == Access::ApiKey) {
            authenticate(keys_, request.get_header_value("Authorization"));
        }
        return route;
    } catch (const ApiError& error) {
        send_error(answer, error);
        if (origin == OriginCheck::Allowed) add_cors_headers(request, answer);
        return nullptr;
    }
}

void Router::run(const Route& route, const HttpRequest& request, HttpResponse& response) const {
    try {
        route.handler(request, response);
    } catch (const ApiError& error) {
        response = HttpResponse();
        send_error(response, error);
    } catch (const util::InputError& error) {
        response = HttpResponse();
        send_error(response, ApiError(400, "invalid_request_error", error.what()));
    } catch (const nlohmann::json::exception& error) {
        // Only a request's JSON can be of the wrong shape: a safety net for a
        // check the parsers missed, still the client's 400.
        response = HttpResponse();
        send_error(response, ApiError(400, "invalid_request_error",
                                      std::string("malformed request: ") + error.what()));
    } catch (const std::exception& error) {
        // Input never lands here (it is an InputError); this is our bug.
        std::fprintf(stderr, "ladder serve: internal error on %s %s: %s\n", request.method.c_str(),
                     request.path.c_str(), error.what());
        response = HttpResponse();
        send_error(response,
                   ApiError(500, "internal_error", std::string("internal error: ") + error.what()));
    }
    if (check_origin(request, policy_) == OriginCheck::Allowed) add_cors_headers(request, response);
}

}  // namespace ladder::server
