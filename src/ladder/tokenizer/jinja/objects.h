// The objects templates meet besides plain data: built-in functions,
// namespace() (the one value a template may change, which is how state
// leaves a loop) and the `loop` variable of a for loop.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ladder/tokenizer/jinja/call_args.h"
#include "ladder/tokenizer/jinja/value.h"

namespace ladder::tokenizer::jinja {

class NativeFunction : public Object {
public:
    using Function = std::function<Value(Interpreter&, CallArgs&)>;
    NativeFunction(std::string name, Function function)
        : name_(std::move(name)), function_(std::move(function)) {}

    std::string type_name() const override { return "builtin_function_or_method"; }
    std::string repr() const override { return "<built-in function " + name_ + ">"; }
    bool is_callable() const override { return true; }
    Value call(Interpreter& interpreter, CallArgs& args) override {
        return function_(interpreter, args);
    }

private:
    std::string name_;
    Function function_;
};

Value native_function(std::string name, NativeFunction::Function function);

class Namespace : public Object {
public:
    explicit Namespace(Dict attributes) : attributes_(std::move(attributes)) {}

    std::string type_name() const override { return "Namespace"; }
    std::string repr() const override;
    Value attribute(const std::string& name) const override;
    bool set_attribute(const std::string& name, Value value) override;
    int depth() const override;
    // Drops what it holds: a namespace may hold itself, and the rendering
    // breaks such cycles when it ends.
    void clear() { attributes_ = Dict(); }

private:
    Dict attributes_;
};

// What map, select, reject, items, unique and batch return (a Python
// generator) and reverse of a list (an iterator): it can be iterated once,
// has no length, cannot be indexed or written as JSON, and is always true.
class Iterator : public Object {
public:
    Iterator(std::string type_name, std::vector<Value> items)
        : type_name_(std::move(type_name)), items_(std::move(items)) {}

    std::string type_name() const override { return type_name_; }
    std::string repr() const override { return "<" + type_name_ + " object>"; }
    // What is left, consumed.
    std::vector<Value> take_all();
    std::optional<Value> take_one();

private:
    std::string type_name_;
    std::vector<Value> items_;
    size_t next_ = 0;
};

Value generator(std::vector<Value> items);

// `loop` inside a for loop. A recursive loop is callable: loop(children)
// runs the body over them one level deeper.
class LoopObject : public Object {
public:
    LoopObject(std::shared_ptr<const std::vector<Value>> items, int depth0,
               NativeFunction::Function recurse)
        : items_(std::move(items)), depth0_(depth0), recurse_(std::move(recurse)) {}

    void set_index(size_t index) { index_ = index; }

    std::string type_name() const override { return "LoopContext"; }
    std::string repr() const override;
    Value attribute(const std::string& name) const override;
    bool is_callable() const override { return static_cast<bool>(recurse_); }
    Value call(Interpreter& interpreter, CallArgs& args) override;

private:
    std::shared_ptr<const std::vector<Value>> items_;
    size_t index_ = 0;
    int depth0_ = 0;
    NativeFunction::Function recurse_;
    // What loop.changed() last saw.
    std::shared_ptr<std::optional<Value>> last_changed_ = std::make_shared<std::optional<Value>>();
};

}  // namespace ladder::tokenizer::jinja
