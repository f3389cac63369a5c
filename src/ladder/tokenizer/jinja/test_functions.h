// jinja2's tests (`x is defined`, `x is string`, `x is divisibleby 3`, ...).
#pragma once

#include <string_view>

#include "ladder/tokenizer/jinja/ast.h"

namespace ladder::tokenizer::jinja {

// nullptr for a test that does not exist.
TestFunction find_test(std::string_view name);

}  // namespace ladder::tokenizer::jinja
