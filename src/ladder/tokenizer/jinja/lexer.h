// Template text -> tokens, as jinja2's lexer splits it in the environment
// transformers renders chat templates with: trim_blocks (the newline after a
// block or comment tag is dropped), lstrip_blocks (spaces before a block or
// comment tag on its own line are dropped), "-" and "+" whitespace control,
// {# comments #} and {% raw %} left out of the token stream or passed as data.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ladder::tokenizer::jinja {

struct Token {
    enum class Type {
        Data,           // template text between tags
        VariableBegin,  // {{
        VariableEnd,    // }}
        BlockBegin,     // {%
        BlockEnd,       // %}
        Name,
        String,   // text holds the value, escapes undone
        Integer,  // integer holds the value
        Float,    // number holds the value
        Operator,
        End,  // end of the template
    };
    Type type = Type::End;
    std::string text;
    int64_t integer = 0;
    double number = 0.0;
    int line = 1;
};

// Throws TemplateError for an unterminated tag, comment or string and for a
// character no token starts with.
std::vector<Token> tokenize(std::string_view source);

}  // namespace ladder::tokenizer::jinja
