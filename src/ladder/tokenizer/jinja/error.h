// The one error a template gives: a syntax error while parsing, or an error
// while rendering (raise_exception, a type error, a limit reached). It is an
// InputError, so the CLI prints it and the server answers 400 with it.
#pragma once

#include <string>
#include <utility>

#include <fmt/format.h>

#include "ladder/util/error.h"

namespace ladder::tokenizer::jinja {

class TemplateError : public util::InputError {
public:
    // raised_by_template: the template's own raise_exception(message), whose
    // message is passed on exactly; other errors get the template line added.
    explicit TemplateError(const std::string& message, bool raised_by_template = false)
        : util::InputError(message), raised_by_template_(raised_by_template) {}
    bool raised_by_template() const { return raised_by_template_; }

private:
    bool raised_by_template_;
};

template <typename... Args>
[[noreturn]] void raise(fmt::format_string<Args...> format, Args&&... args) {
    throw TemplateError(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace ladder::tokenizer::jinja
