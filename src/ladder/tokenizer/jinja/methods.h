// The methods of str, dict, list and tuple that templates call
// (message.content.strip(), tool.items(), ...), with Python's behaviour. The
// methods that change a container are refused, as jinja2's immutable sandbox
// (which transformers uses) refuses them.
#pragma once

#include <string>

#include "ladder/tokenizer/jinja/value.h"

namespace ladder::tokenizer::jinja {

// The bound method `self.name`; undefined when the type has no such method
// (with an empty reason), or with the sandbox's message when it is unsafe.
Value find_method(const Value& self, const std::string& name);

}  // namespace ladder::tokenizer::jinja
