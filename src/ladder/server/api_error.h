// An error answered to an API client in OpenAI's shape:
// {"error": {"message", "type", "param", "code"}} with an HTTP status.
// It is an InputError, so the CLI prints its message like any other.
#pragma once

#include <string>

#include "ladder/util/error.h"

namespace ladder::server {

class ApiError : public util::InputError {
public:
    ApiError(int status, std::string type, std::string message, std::string param = {},
             std::string code = {})
        : util::InputError(message),
          status_(status),
          type_(std::move(type)),
          param_(std::move(param)),
          code_(std::move(code)) {}

    int status() const { return status_; }
    const std::string& type() const { return type_; }
    const std::string& param() const { return param_; }  // the offending field, if one
    const std::string& code() const { return code_; }

private:
    int status_;
    std::string type_;
    std::string param_;
    std::string code_;
};

// 400 invalid_request_error about one field.
[[noreturn]] inline void invalid_param(const std::string& param, const std::string& message) {
    throw ApiError(400, "invalid_request_error", message, param);
}

}  // namespace ladder::server
