// The statement half of the interpreter, and macros.
#include "ladder/tokenizer/jinja/interpreter.h"

#include <fmt/format.h>

#include "ladder/tokenizer/jinja/error.h"
#include "ladder/tokenizer/jinja/objects.h"
#include "ladder/tokenizer/jinja/operations.h"

namespace ladder::tokenizer::jinja {
namespace {

// A {% macro %}, or the caller() of a {% call %} block. It keeps its
// defining scope weakly: the scope holds the macro, and a strong pointer
// back would never be freed.
class Macro : public Object {
public:
    Macro(const Stmt& definition, const std::shared_ptr<Scope>& closure, std::string name)
        : definition_(definition), closure_(closure), name_(std::move(name)) {}

    std::string type_name() const override { return "Macro"; }
    std::string repr() const override { return "<Macro '" + name_ + "'>"; }
    Value attribute(const std::string& name) const override {
        if (name == "name") return Value::string(name_);
        return Object::attribute(name);
    }
    bool is_callable() const override { return true; }
    Value call(Interpreter& interpreter, CallArgs& args) override {
        const std::shared_ptr<Scope> closure = closure_.lock();
        if (!closure) raise("macro '{}' was called after the scope it was defined in ended", name_);
        Value caller;
        for (auto it = args.keywords.begin(); it != args.keywords.end(); ++it) {
            if (it->first == "caller") {
                caller = it->second;
                args.keywords.erase(it);
                break;
            }
        }
        return interpreter.call_macro(definition_, closure, args, caller);
    }

private:
    const Stmt& definition_;
    std::weak_ptr<Scope> closure_;
    std::string name_;
};

class CallDepth {
public:
    CallDepth(int& depth, int limit) : depth_(depth) {
        if (++depth_ > limit) {
            --depth_;
            raise("macros nest more than {} calls deep (a macro that never stops calling itself?)",
                  limit);
        }
    }
    ~CallDepth() { --depth_; }

private:
    int& depth_;
};

}  // namespace

const Value* Scope::find(std::string_view name) const {
    for (const Scope* scope = this; scope != nullptr; scope = scope->parent_.get()) {
        for (const auto& [variable, value] : scope->variables_) {
            if (variable == name) return &value;
        }
    }
    return nullptr;
}

void Scope::set(std::string_view name, Value value) {
    for (auto& [variable, existing] : variables_) {
        if (variable == name) {
            existing = std::move(value);
            return;
        }
    }
    variables_.emplace_back(std::string(name), std::move(value));
}

Interpreter::~Interpreter() {
    for (const auto& ns : namespaces_) ns->clear();
}

std::string Interpreter::render(const Body& body, const std::shared_ptr<Scope>& globals) {
    std::string out;
    try {
        execute(body, globals, out);
    } catch (const TemplateError& error) {
        if (error.raised_by_template()) throw;
        throw TemplateError(fmt::format("{} (template line {})", error.what(), line_));
    }
    return out;
}

Value Interpreter::call(const Value& callee, CallArgs& args) {
    budget_.step();
    if (callee.is_undefined()) raise("{}", callee.undefined_reason());
    if (!callee.is_object() || !callee.as_object().is_callable()) {
        raise("'{}' object is not callable", type_name(callee));
    }
    return callee.as_object().call(*this, args);
}

Value Interpreter::call_macro(const Stmt& macro, const std::shared_ptr<Scope>& closure,
                              CallArgs& args, const Value& caller) {
    const CallDepth depth(call_depth_, budget_.limits().max_call_depth);
    const int calling_line = line_;
    auto scope = std::make_shared<Scope>(closure);
    const std::vector<Parameter>& params = macro.params;
    std::vector<bool> given(params.size(), false);
    std::vector<Value> extra_positional;
    for (size_t i = 0; i < args.positional.size(); ++i) {
        if (i < params.size()) {
            scope->set(params[i].name, args.positional[i]);
            given[i] = true;
        } else {
            extra_positional.push_back(args.positional[i]);
        }
    }
    Dict extra_keywords;
    for (const auto& [name, value] : args.keywords) {
        size_t i = 0;
        while (i < params.size() && params[i].name != name) ++i;
        if (i == params.size()) {
            extra_keywords.set(Value::string(name), value);
            continue;
        }
        if (given[i]) raise("macro '{}' got multiple values for argument '{}'", macro.name, name);
        scope->set(name, value);
        given[i] = true;
    }
    // Defaults are evaluated at the call, in the macro's scope: one may use
    // the parameters before it.
    for (size_t i = 0; i < params.size(); ++i) {
        if (given[i]) continue;
        scope->set(params[i].name, params[i].default_value
                                       ? evaluate(*params[i].default_value, *scope)
                                       : Value::undefined(fmt::format(
                                             "parameter '{}' was not provided", params[i].name)));
    }
    scope->set("varargs", Value::tuple(std::move(extra_positional)));
    scope->set("kwargs", Value::dict(std::move(extra_keywords)));
    if (!caller.is_undefined()) scope->set("caller", caller);
    std::string out;
    execute(macro.body, scope, out);
    line_ = calling_line;
    return Value::string(std::move(out));
}

Interpreter::Flow Interpreter::execute(const Body& body, const std::shared_ptr<Scope>& scope,
                                       std::string& out) {
    for (const StmtPtr& stmt : body) {
        const Flow flow = execute(*stmt, scope, out);
        if (flow != Flow::Normal) return flow;
    }
    return Flow::Normal;
}

Interpreter::Flow Interpreter::execute(const Stmt& stmt, const std::shared_ptr<Scope>& scope,
                                       std::string& out) {
    budget_.step();
    line_ = stmt.line;
    switch (stmt.kind) {
        case Stmt::Kind::Text:
            append(out, stmt.text);
            return Flow::Normal;
        case Stmt::Kind::Output:
            append(out, to_str(evaluate(*stmt.expr, *scope)));
            return Flow::Normal;
        case Stmt::Kind::If:
            for (const auto& [condition, body] : stmt.branches) {
                if (truthy(evaluate(*condition, *scope))) return execute(body, scope, out);
            }
            return execute(stmt.else_body, scope, out);
        case Stmt::Kind::For:
            return execute_for(stmt, scope, out);
        case Stmt::Kind::Set:
            execute_set(stmt, scope);
            return Flow::Normal;
        case Stmt::Kind::SetBlock: {
            const Value text = Value::string(render_in_child_scope(stmt.body, scope));
            assign(stmt.target, apply_filters(stmt.filters, text, *scope), *scope);
            return Flow::Normal;
        }
        case Stmt::Kind::Macro:
            scope->set(stmt.name, Value::object(std::make_shared<Macro>(stmt, scope, stmt.name)));
            return Flow::Normal;
        case Stmt::Kind::CallBlock:
            execute_call_block(stmt, scope, out);
            return Flow::Normal;
        case Stmt::Kind::FilterBlock: {
            const Value text = Value::string(render_in_child_scope(stmt.body, scope));
            append(out, to_str(apply_filters(stmt.filters, text, *scope)));
            return Flow::Normal;
        }
        case Stmt::Kind::With: {
            auto inner = std::make_shared<Scope>(scope);
            for (const auto& [name, value] : stmt.assignments)
                inner->set(name, evaluate(*value, *inner));
            return execute(stmt.body, inner, out);
        }
        case Stmt::Kind::Break:
            return Flow::Break;
        case Stmt::Kind::Continue:
            return Flow::Continue;
        case Stmt::Kind::Generation:
            return execute(stmt.body, scope, out);
    }
    return Flow::Normal;
}

Interpreter::Flow Interpreter::execute_for(const Stmt& stmt, const std::shared_ptr<Scope>& scope,
                                           std::string& out) {
    run_loop(stmt, scope, evaluate(*stmt.expr, *scope), 0, out);
    return Flow::Normal;
}

void Interpreter::run_loop(const Stmt& stmt, const std::shared_ptr<Scope>& scope,
                           const Value& iterable, int depth0, std::string& out) {
    std::vector<Value> all = iterate(iterable);
    auto items = std::make_shared<std::vector<Value>>();
    if (stmt.condition) {  // `for x in xs if cond`: loop.* counts only the items kept
        for (Value& item : all) {
            budget_.step();
            Scope probe(scope);
            assign(stmt.target, item, probe);
            if (truthy(evaluate(*stmt.condition, probe))) items->push_back(std::move(item));
        }
    } else {
        *items = std::move(all);
    }
    if (items->empty()) {
        execute(stmt.else_body, std::make_shared<Scope>(scope), out);
        return;
    }
    NativeFunction::Function recurse;
    if (stmt.recursive) {
        recurse = [this, &stmt, weak = std::weak_ptr<Scope>(scope), depth0](Interpreter&,
                                                                            CallArgs& args) {
            const std::shared_ptr<Scope> outer = weak.lock();
            if (!outer) raise("a recursive loop was called after it ended");
            if (args.positional.size() != 1 || !args.keywords.empty())
                raise("loop() takes one iterable");
            const CallDepth depth(call_depth_, budget_.limits().max_call_depth);
            std::string nested;
            run_loop(stmt, outer, args.positional[0], depth0 + 1, nested);
            return Value::string(std::move(nested));
        };
    }
    auto loop = std::make_shared<LoopObject>(items, depth0, std::move(recurse));
    const Value loop_value = Value::object(loop);
    for (size_t i = 0; i < items->size(); ++i) {
        budget_.step();
        loop->set_index(i);
        auto iteration = std::make_shared<Scope>(scope);
        assign(stmt.target, (*items)[i], *iteration);
        iteration->set("loop", loop_value);
        if (execute(stmt.body, iteration, out) == Flow::Break) break;
    }
}

void Interpreter::execute_set(const Stmt& stmt, const std::shared_ptr<Scope>& scope) {
    assign(stmt.target, evaluate(*stmt.expr, *scope), *scope);
}

void Interpreter::execute_call_block(const Stmt& stmt, const std::shared_ptr<Scope>& scope,
                                     std::string& out) {
    const Value caller = Value::object(std::make_shared<Macro>(stmt, scope, "caller"));
    append(out, to_str(evaluate_call(*stmt.expr, *scope, {{"caller", caller}})));
}

void Interpreter::assign(const AssignTarget& target, const Value& value, Scope& scope) {
    if (!target.attribute.empty()) {
        const Value* object = scope.find(target.names.front());
        if (object == nullptr || !object->is_object() ||
            !object->as_object().set_attribute(target.attribute, value)) {
            raise("cannot assign attribute on non-namespace object");
        }
        return;
    }
    if (!target.unpack) {
        scope.set(target.names.front(), value);
        return;
    }
    const std::vector<Value> items = iterate(value);
    if (items.size() > target.names.size()) {
        raise("too many values to unpack (expected {})", target.names.size());
    }
    if (items.size() < target.names.size()) {
        raise("not enough values to unpack (expected {}, got {})", target.names.size(),
              items.size());
    }
    for (size_t i = 0; i < items.size(); ++i) scope.set(target.names[i], items[i]);
}

std::string Interpreter::render_in_child_scope(const Body& body,
                                               const std::shared_ptr<Scope>& scope) {
    std::string text;
    execute(body, std::make_shared<Scope>(scope), text);
    return text;
}

Value Interpreter::apply_filters(const std::vector<FilterCall>& filters, Value value,
                                 const Scope& scope) {
    for (const FilterCall& filter : filters) value = evaluate_filter(filter, value, scope);
    return value;
}

void Interpreter::append(std::string& out, std::string_view text) {
    budget_.charge(text.size());
    if (out.size() + text.size() > budget_.limits().max_output_bytes) {
        raise("the rendered text is longer than the limit of {} bytes",
              budget_.limits().max_output_bytes);
    }
    out += text;
}

}  // namespace ladder::tokenizer::jinja
