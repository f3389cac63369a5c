#include "ladder/tokenizer/jinja/test_functions.h"

#include "ladder/tokenizer/jinja/call_args.h"
#include "ladder/tokenizer/jinja/error.h"
#include "ladder/tokenizer/jinja/filters.h"
#include "ladder/tokenizer/jinja/objects.h"
#include "ladder/tokenizer/jinja/operations.h"
#include "ladder/tokenizer/jinja/python_string.h"

namespace ladder::tokenizer::jinja {
namespace {

struct TestEntry {
    std::string_view name;
    TestFunction function;
};

// A test without arguments.
template <bool (*Predicate)(const Value&)>
bool unary(Interpreter&, const Value& value, CallArgs& args) {
    BoundArgs("test", args, {});
    return Predicate(value);
}

// A test comparing with one argument.
template <bool (*Predicate)(const Value&, const Value&)>
bool binary(Interpreter&, const Value& value, CallArgs& args) {
    const BoundArgs bound("test", args, {"other"});
    return Predicate(value, bound.require(0));
}

bool is_defined(const Value& v) { return !v.is_undefined(); }
bool is_undefined(const Value& v) { return v.is_undefined(); }
bool is_none(const Value& v) { return v.is_none(); }
bool is_boolean(const Value& v) { return v.kind() == Value::Kind::Bool; }
bool is_true(const Value& v) { return v.kind() == Value::Kind::Bool && v.as_bool(); }
bool is_false(const Value& v) { return v.kind() == Value::Kind::Bool && !v.as_bool(); }
bool is_integer(const Value& v) { return v.kind() == Value::Kind::Int; }
bool is_float(const Value& v) { return v.kind() == Value::Kind::Float; }
bool is_number(const Value& v) { return v.is_number(); }
bool is_string(const Value& v) { return v.is_string(); }
bool is_mapping(const Value& v) { return v.is_dict(); }
// Undefined iterates as empty, so jinja2 counts it as iterable and a sequence.
bool is_sequence(const Value& v) {
    return v.is_undefined() || v.is_string() || v.is_list_or_tuple() || v.is_dict();
}
bool is_iterable(const Value& v) {
    return is_sequence(v) ||
           (v.is_object() && dynamic_cast<const Iterator*>(&v.as_object()) != nullptr);
}
bool is_callable(const Value& v) { return v.is_object() && v.as_object().is_callable(); }
bool is_escaped(const Value& v) { return v.is_markup(); }

bool is_lower(const Value& v) {
    if (!v.is_string()) return false;
    const std::string& t = v.as_string();
    return py::lower(t) == t && py::upper(t) != t;
}

bool is_upper(const Value& v) {
    if (!v.is_string()) return false;
    const std::string& t = v.as_string();
    return py::upper(t) == t && py::lower(t) != t;
}

int64_t integer_of(const Value& v, std::string_view test) {
    if (!v.is_integral()) raise("the '{}' test needs an integer, not {}", test, type_name(v));
    return v.as_int();
}

bool is_odd(Interpreter&, const Value& value, CallArgs& args) {
    BoundArgs("odd", args, {});
    return (integer_of(value, "odd") & 1) != 0;
}

bool is_even(Interpreter&, const Value& value, CallArgs& args) {
    BoundArgs("even", args, {});
    return (integer_of(value, "even") & 1) == 0;
}

bool is_divisible_by(Interpreter&, const Value& value, CallArgs& args) {
    const BoundArgs bound("divisibleby", args, {"num"});
    const int64_t divisor = integer_of(bound.require(0), "divisibleby");
    if (divisor == 0) raise("integer modulo by zero");
    return divisor == -1 || integer_of(value, "divisibleby") % divisor == 0;
}

bool equal(const Value& a, const Value& b) { return equals(a, b); }
bool not_equal(const Value& a, const Value& b) { return !equals(a, b); }
bool less(const Value& a, const Value& b) { return compare(a, b, "<") < 0; }
bool less_equal(const Value& a, const Value& b) { return compare(a, b, "<=") <= 0; }
bool greater(const Value& a, const Value& b) { return compare(a, b, ">") > 0; }
bool greater_equal(const Value& a, const Value& b) { return compare(a, b, ">=") >= 0; }
bool is_in(const Value& a, const Value& b) { return contains(b, a); }

// Python's `is`: the singletons, small cached ints, and the same object.
bool same_as(const Value& a, const Value& b) {
    if (a.kind() != b.kind()) return false;
    switch (a.kind()) {
        case Value::Kind::Undefined:
        case Value::Kind::None:
            return true;
        case Value::Kind::Bool:
            return a.as_bool() == b.as_bool();
        case Value::Kind::Int:
            return a.as_int() == b.as_int() && a.as_int() >= -5 && a.as_int() <= 256;
        case Value::Kind::Object:
            return a.object_ptr() == b.object_ptr();
        default:
            return false;
    }
}

bool is_filter(Interpreter&, const Value& value, CallArgs& args) {
    BoundArgs("filter", args, {});
    return value.is_string() && find_filter(value.as_string()) != nullptr;
}

bool is_test(Interpreter&, const Value& value, CallArgs& args) {
    BoundArgs("test", args, {});
    return value.is_string() && find_test(value.as_string()) != nullptr;
}

constexpr TestEntry kTests[] = {
    {"boolean", unary<is_boolean>},
    {"callable", unary<is_callable>},
    {"defined", unary<is_defined>},
    {"divisibleby", is_divisible_by},
    {"eq", binary<equal>},
    {"equalto", binary<equal>},
    {"==", binary<equal>},
    {"escaped", unary<is_escaped>},
    {"even", is_even},
    {"false", unary<is_false>},
    {"filter", is_filter},
    {"float", unary<is_float>},
    {"ge", binary<greater_equal>},
    {">=", binary<greater_equal>},
    {"gt", binary<greater>},
    {"greaterthan", binary<greater>},
    {">", binary<greater>},
    {"in", binary<is_in>},
    {"integer", unary<is_integer>},
    {"iterable", unary<is_iterable>},
    {"le", binary<less_equal>},
    {"<=", binary<less_equal>},
    {"lower", unary<is_lower>},
    {"lt", binary<less>},
    {"lessthan", binary<less>},
    {"<", binary<less>},
    {"mapping", unary<is_mapping>},
    {"ne", binary<not_equal>},
    {"!=", binary<not_equal>},
    {"none", unary<is_none>},
    {"number", unary<is_number>},
    {"odd", is_odd},
    {"sameas", binary<same_as>},
    {"sequence", unary<is_sequence>},
    {"string", unary<is_string>},
    {"test", is_test},
    {"true", unary<is_true>},
    {"undefined", unary<is_undefined>},
    {"upper", unary<is_upper>},
};

}  // namespace

TestFunction find_test(std::string_view name) {
    for (const TestEntry& entry : kTests) {
        if (entry.name == name) return entry.function;
    }
    return nullptr;
}

}  // namespace ladder::tokenizer::jinja
