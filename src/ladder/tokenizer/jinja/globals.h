// The functions a template can call by name: jinja2's range, dict,
// namespace, cycler and joiner, and transformers' raise_exception and
// strftime_now.
#pragma once

#include "ladder/tokenizer/jinja/interpreter.h"

namespace ladder::tokenizer::jinja {

void add_globals(Scope& scope);

}  // namespace ladder::tokenizer::jinja
