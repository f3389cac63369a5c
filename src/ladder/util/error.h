// The one error type for input from outside (files, flags, requests): it
// carries a one-line human message and is caught at the CLI or server edge.
#pragma once

#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace ladder::util {

class InputError : public std::runtime_error {
public:
    explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
    throw InputError(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace ladder::util
