// Registers routes on httplib with what each needs around it: the API key
// check, any error turned into OpenAI's shape (a bug into a 500 that says
// so, never a dropped connection), and the table of paths that turns a known
// path with the wrong method into 405 instead of 404.
#pragma once

#include <httplib.h>

#include <functional>
#include <regex>
#include <span>
#include <string>
#include <vector>

#include "ladder/server/auth.h"

namespace ladder::server {

class Router {
public:
    using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;
    enum class Access { Public, ApiKey };

    // keys: checked on Access::ApiKey routes (none: every route is open).
    Router(httplib::Server& server, std::span<const ApiKey> keys);

    // path is an httplib pattern (a regex over the whole path).
    void get(const std::string& path, Access access, Handler handler);
    void post(const std::string& path, Access access, Handler handler);

    // The methods some route answers on this path ("GET", "POST"); empty
    // when no route has the path.
    std::vector<std::string> methods_for(const std::string& path) const;

private:
    Handler guarded(Access access, Handler handler) const;

    httplib::Server& server_;
    std::span<const ApiKey> keys_;  // the server config's, which outlives the router
    struct Route {
        std::regex pattern;
        std::string method;
    };
    std::vector<Route> routes_;
};

}  // namespace ladder::server
