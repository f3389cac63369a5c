#include "ladder/tokenizer/jinja/objects.h"

#include <algorithm>

#include "ladder/tokenizer/jinja/error.h"

namespace ladder::tokenizer::jinja {

Value native_function(std::string name, NativeFunction::Function function) {
    return Value::object(std::make_shared<NativeFunction>(std::move(name), std::move(function)));
}

std::vector<Value> Iterator::take_all() {
    std::vector<Value> rest(items_.begin() + static_cast<std::ptrdiff_t>(next_), items_.end());
    next_ = items_.size();
    return rest;
}

std::optional<Value> Iterator::take_one() {
    if (next_ == items_.size()) return std::nullopt;
    return items_[next_++];
}

Value generator(std::vector<Value> items) {
    return Value::object(std::make_shared<Iterator>("generator", std::move(items)));
}

std::string Namespace::repr() const {
    // A namespace may hold itself (ns.me = [ns]): bound the recursion.
    thread_local int depth = 0;
    struct Nested {
        Nested() { ++depth; }
        ~Nested() { --depth; }
    } nested;
    if (depth > Value::kMaxDepth) raise("a namespace that contains itself cannot be printed");
    return "<Namespace " + jinja::repr(Value::dict(attributes_)) + ">";
}

Value Namespace::attribute(const std::string& name) const {
    if (const Value* value = attributes_.find(name)) return *value;
    return Object::attribute(name);
}

bool Namespace::set_attribute(const std::string& name, Value value) {
    if (value.depth() + 1 > Value::kMaxDepth) {
        raise("values nest more than {} levels deep", Value::kMaxDepth);
    }
    attributes_.set(Value::string(name), std::move(value));
    return true;
}

int Namespace::depth() const {
    int depth = 0;
    for (const auto& entry : attributes_.entries()) depth = std::max(depth, entry.second.depth());
    return depth + 1;
}

std::string LoopObject::repr() const {
    return "<LoopContext " + std::to_string(index_ + 1) + "/" + std::to_string(items_->size()) +
           ">";
}

Value LoopObject::attribute(const std::string& name) const {
    const auto n = static_cast<int64_t>(items_->size());
    const auto i = static_cast<int64_t>(index_);
    if (name == "index") return Value::integer(i + 1);
    if (name == "index0") return Value::integer(i);
    if (name == "revindex") return Value::integer(n - i);
    if (name == "revindex0") return Value::integer(n - i - 1);
    if (name == "first") return Value::boolean(i == 0);
    if (name == "last") return Value::boolean(i == n - 1);
    if (name == "length") return Value::integer(n);
    if (name == "depth") return Value::integer(depth0_ + 1);
    if (name == "depth0") return Value::integer(depth0_);
    if (name == "previtem") {
        return i > 0 ? (*items_)[index_ - 1] : Value::undefined("there is no previous item");
    }
    if (name == "nextitem") {
        return i + 1 < n ? (*items_)[index_ + 1] : Value::undefined("there is no next item");
    }
    if (name == "cycle") {
        const size_t index = index_;
        return native_function("cycle", [index](Interpreter&, CallArgs& args) {
            if (args.positional.empty()) raise("no items for cycling given");
            return args.positional[index % args.positional.size()];
        });
    }
    if (name == "changed") {
        return native_function("changed", [seen = last_changed_](Interpreter&, CallArgs& args) {
            Value now = Value::list(args.positional);
            if (*seen && equals(**seen, now)) return Value::boolean(false);
            *seen = std::move(now);
            return Value::boolean(true);
        });
    }
    return Object::attribute(name);
}

Value LoopObject::call(Interpreter& interpreter, CallArgs& args) {
    if (!recurse_) return Object::call(interpreter, args);
    return recurse_(interpreter, args);
}

}  // namespace ladder::tokenizer::jinja
