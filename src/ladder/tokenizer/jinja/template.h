// A Jinja2 template, parsed once and rendered many times (from any number of
// threads: rendering reads the parsed tree and keeps its state per call).
// Rendering matches Python's jinja2 in the environment transformers renders
// chat templates with: trim_blocks and lstrip_blocks, the loop controls, the
// immutable sandbox, raise_exception and strftime_now, tojson as json.dumps.
#pragma once

#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ladder/tokenizer/jinja/ast.h"
#include "ladder/tokenizer/jinja/limits.h"
#include "ladder/tokenizer/jinja/value.h"

namespace ladder::tokenizer::jinja {

struct RenderOptions {
    RenderLimits limits;
    // The local time strftime_now formats; empty: the system clock.
    std::function<std::tm()> clock;
};

class Template {
public:
    // Throws TemplateError ("syntax error at line N: ...").
    explicit Template(std::string_view source);

    // The template's variables are `variables` (and the built-in globals).
    // Throws TemplateError: raise_exception(message) gives exactly its
    // message; other errors name the template line.
    std::string render(const std::vector<std::pair<std::string, Value>>& variables,
                       const RenderOptions& options = {}) const;

    const std::string& source() const { return source_; }

private:
    std::string source_;
    std::shared_ptr<const Body> body_;
};

}  // namespace ladder::tokenizer::jinja
