// The routes, and what every request passes before its route runs, decided
// on the header alone so that no body is read for a request that will be
// refused: the Host and Origin checks (browser_safety.h), CORS preflights,
// 404 and 405 (with Allow), the JSON Content-Type of a POST and the API key.
// Running a route turns any exception into OpenAI's error shape (a bug into
// a 500 that says so, never a dropped connection). Knows no transport.
#pragma once

#include <functional>
#include <regex>
#include <span>
#include <string>
#include <vector>

#include "ladder/server/auth.h"
#include "ladder/server/browser_safety.h"
#include "ladder/server/http_message.h"

namespace ladder::server {

class Router {
public:
    using Handler = std::function<void(const HttpRequest&, HttpResponse&)>;
    enum class Access { Public, ApiKey };

    struct Route {
        std::regex pattern;  // over the whole decoded path
        std::string method;
        Access access = Access::Public;
        Handler handler;
        // GET routes answer at once and run on the event loop; POST routes
        // parse bodies and tokenize, on a handler thread.
        bool on_event_loop = false;
    };

    // keys: checked on Access::ApiKey routes (none: every route is open).
    Router(std::span<const ApiKey> keys, BrowserPolicy policy);

    // path is a regex over the whole path; its groups become path_params.
    void get(const std::string& path, Access access, Handler handler);
    void post(const std::string& path, Access access, Handler handler);

    // For a request whose header has arrived: its route (path_params
    // filled in), or null with answer set (a refusal, a preflight's answer).
    const Route* screen(HttpRequest& request, HttpResponse& answer) const;
    // Runs the route on the complete request; never throws.
    void run(const Route& route, const HttpRequest& request, HttpResponse& response) const;

    // The methods some route answers on this path ("GET", "POST"); empty
    // when no route has the path.
    std::vector<std::string> methods_for(const std::string& path) const;

private:
    const Route* match(HttpRequest& request, HttpResponse& answer) const;
    void add(const std::string& path, const char* method, Access access, Handler handler);

    std::span<const ApiKey> keys_;  // the server config's, which outlives the router
    BrowserPolicy policy_;
    std::vector<Route> routes_;
};

}  // namespace ladder::server
