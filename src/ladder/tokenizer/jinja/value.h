// The values a Jinja template computes with, with the Python semantics jinja2
// gives them: undefined apart from none, bool/int/float, strings, lists and
// tuples, insertion-ordered dicts, and objects (callables, namespaces, the
// loop). Containers are immutable and shared, so copying a Value is cheap.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ladder::tokenizer::jinja {

class Dict;
class Object;

class Value {
public:
    enum class Kind : uint8_t {
        Undefined,
        None,
        Bool,
        Int,
        Float,
        String,
        List,
        Tuple,
        Dict,
        Object
    };

    // Undefined. Using it where a value is needed raises `reason`.
    Value() = default;
    static Value undefined(std::string reason);
    static Value none();
    static Value boolean(bool value);
    static Value integer(int64_t value);
    static Value number(double value);
    static Value string(std::string text);
    // A string marked safe (jinja2's Markup, from |safe or |escape): `+`
    // HTML-escapes the plain string it is joined with, as Markup does.
    static Value markup(std::string text);
    static Value list(std::vector<Value> items);
    static Value tuple(std::vector<Value> items);
    static Value dict(Dict entries);
    static Value object(std::shared_ptr<Object> object);

    Kind kind() const { return kind_; }
    bool is_undefined() const { return kind_ == Kind::Undefined; }
    bool is_none() const { return kind_ == Kind::None; }
    bool is_string() const { return kind_ == Kind::String; }
    bool is_markup() const { return kind_ == Kind::String && markup_; }
    bool is_dict() const { return kind_ == Kind::Dict; }
    bool is_object() const { return kind_ == Kind::Object; }
    // bool, int or float (Python's bool is an int).
    bool is_number() const {
        return kind_ == Kind::Bool || kind_ == Kind::Int || kind_ == Kind::Float;
    }
    // int or bool.
    bool is_integral() const { return kind_ == Kind::Bool || kind_ == Kind::Int; }
    bool is_list_or_tuple() const { return kind_ == Kind::List || kind_ == Kind::Tuple; }

    bool as_bool() const { return scalar_.b; }
    // int or bool as an integer.
    int64_t as_int() const { return kind_ == Kind::Bool ? int64_t{scalar_.b} : scalar_.i; }
    // Any number as a double.
    double as_double() const;
    const std::string& as_string() const;
    const std::vector<Value>& items() const;  // List or Tuple
    const Dict& as_dict() const;
    Object& as_object() const { return *object_; }
    const std::shared_ptr<Object>& object_ptr() const { return object_; }
    // Why this value is undefined (the message an error about it carries).
    const std::string& undefined_reason() const;
    // How deeply containers nest in this value (0 for scalars and strings).
    int depth() const;

    // Deeper nesting is refused when a container is built, so that printing,
    // comparing and freeing a value never recurse without bound.
    static constexpr int kMaxDepth = 256;

private:
    static Value container(Kind kind, std::shared_ptr<const void> data, int depth);

    Kind kind_ = Kind::Undefined;
    bool markup_ = false;
    uint16_t depth_ = 0;
    union Scalar {
        bool b;
        int64_t i;
        double f;
    } scalar_{.i = 0};
    std::shared_ptr<const void> data_;  // string, item vector, Dict or undefined reason
    std::shared_ptr<Object> object_;
};

// A Python dict: keys kept in insertion order, compared with Python's ==.
class Dict {
public:
    using Entry = std::pair<Value, Value>;

    // Replaces the value of an equal key, or appends.
    void set(Value key, Value value);
    // Appends without looking for an equal key (the caller knows it is new).
    void append_new(Value key, Value value) {
        entries_.emplace_back(std::move(key), std::move(value));
    }
    const Value* find(const Value& key) const;
    const Value* find(std::string_view key) const;
    size_t size() const { return entries_.size(); }
    bool empty() const { return entries_.empty(); }
    const std::vector<Entry>& entries() const { return entries_; }

private:
    std::vector<Entry> entries_;
};

struct CallArgs;
class Interpreter;

// Everything that is not plain data: macros, built-in functions, bound
// methods, namespace(), the loop variable.
class Object {
public:
    virtual ~Object() = default;
    // Python's name for the type, as error messages show it.
    virtual std::string type_name() const = 0;
    virtual std::string repr() const;
    // Undefined when there is no such attribute.
    virtual Value attribute(const std::string& name) const;
    // False where attributes cannot be assigned (only namespaces allow it).
    virtual bool set_attribute(const std::string& name, Value value);
    virtual bool is_callable() const { return false; }
    virtual Value call(Interpreter& interpreter, CallArgs& args);
    // Nesting depth of what the object holds (see Value::depth).
    virtual int depth() const { return 1; }
};

// Python's truth value.
bool truthy(const Value& value);
// Python's ==.
bool equals(const Value& a, const Value& b);
// Python's <, <=, >, >= as -1/0/1; TemplateError where the types do not order.
int compare(const Value& a, const Value& b, std::string_view op);
// Python's type name ("str", "int", "NoneType", "dict", ...).
std::string type_name(const Value& value);
// str(value) as a template prints it (undefined prints nothing).
std::string to_str(const Value& value);
// repr(value), as str() of a list or dict shows its items.
std::string repr(const Value& value);

}  // namespace ladder::tokenizer::jinja
