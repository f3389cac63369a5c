// What the template's operators do to values, with jinja2's and Python's
// rules: attribute and item lookup (a missing one is undefined, looking into
// an undefined value is an error), slicing, iteration, len(), `in`, and the
// arithmetic and string operators. Anything that builds text is charged to
// the rendering's budget.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ladder/tokenizer/jinja/limits.h"
#include "ladder/tokenizer/jinja/value.h"

namespace ladder::tokenizer::jinja {

// a.b: a method of the value (str.strip, dict.items, ...), else the dict's key.
Value get_attribute(const Value& object, const std::string& name);
// a[b]: the key or index, else a method of that name.
Value get_item(const Value& object, const Value& key);
// a[start:stop:step] of a string, list or tuple; undefined or none parts take
// Python's defaults.
Value get_slice(Budget& budget, const Value& object, const Value& start, const Value& stop,
                const Value& step);
// The items a for loop visits: list and tuple items, dict keys, the
// characters of a string; none for undefined. TemplateError otherwise.
std::vector<Value> iterate(const Value& value);
// len(); 0 for undefined.
int64_t length(const Value& value);
// `item in container`.
bool contains(const Value& container, const Value& item);
// + - * / // % ** and ~.
Value binary_operation(Budget& budget, std::string_view op, const Value& a, const Value& b);
// Unary - and +.
Value unary_operation(std::string_view op, const Value& operand);
// Python's printf-style `format % args` (the format filter and the % operator).
// With escape_args (a Markup format), what %s and %r write of plain strings is escaped.
std::string percent_format(Budget& budget, const std::string& format, const Value& args,
                           bool escape_args = false);
// Raises the error an undefined value carries, when one is used as a value.
void require_defined(const Value& value);
// HTML escaping as Markup does it (& < > " ').
std::string html_escape(std::string_view text);
// The text of a string for joining with Markup: escaped unless it is Markup.
std::string escaped_text(const Value& value);

}  // namespace ladder::tokenizer::jinja
