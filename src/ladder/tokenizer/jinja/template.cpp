#include "ladder/tokenizer/jinja/template.h"

#include "ladder/tokenizer/jinja/globals.h"
#include "ladder/tokenizer/jinja/interpreter.h"
#include "ladder/tokenizer/jinja/lexer.h"
#include "ladder/tokenizer/jinja/parser.h"

namespace ladder::tokenizer::jinja {
namespace {

std::tm local_now() {
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    return local;
}

}  // namespace

Template::Template(std::string_view source)
    : source_(source), body_(std::make_shared<const Body>(parse(tokenize(source)))) {}

std::string Template::render(const std::vector<std::pair<std::string, Value>>& variables,
                             const RenderOptions& options) const {
    Interpreter interpreter(options.limits, options.clock ? options.clock : local_now);
    auto globals = std::make_shared<Scope>();
    add_globals(*globals);
    for (const auto& [name, value] : variables) globals->set(name, value);
    return interpreter.render(*body_, globals);
}

}  // namespace ladder::tokenizer::jinja
