// The expression half of the interpreter.
#include <fmt/format.h>

#include "ladder/tokenizer/jinja/error.h"
#include "ladder/tokenizer/jinja/interpreter.h"
#include "ladder/tokenizer/jinja/operations.h"

namespace ladder::tokenizer::jinja {
namespace {

// Lists and dicts cannot be dict keys in Python.
void require_hashable(const Value& key) {
    if (key.kind() == Value::Kind::List || key.is_dict())
        raise("unhashable type: '{}'", type_name(key));
    if (key.kind() == Value::Kind::Tuple) {
        for (const Value& item : key.items()) require_hashable(item);
    }
}

}  // namespace

Value Interpreter::evaluate(const Expr& expr, const Scope& scope) {
    budget_.step();
    switch (expr.kind) {
        case Expr::Kind::Literal:
            return expr.literal;
        case Expr::Kind::Name:
            if (const Value* value = scope.find(expr.name)) return *value;
            return Value::undefined(fmt::format("'{}' is undefined", expr.name));
        case Expr::Kind::List:
        case Expr::Kind::Tuple: {
            std::vector<Value> items;
            items.reserve(expr.items.size());
            for (const ExprPtr& item : expr.items) items.push_back(evaluate(*item, scope));
            return expr.kind == Expr::Kind::List ? Value::list(std::move(items))
                                                 : Value::tuple(std::move(items));
        }
        case Expr::Kind::Dict: {
            Dict dict;
            for (size_t i = 0; i + 1 < expr.items.size(); i += 2) {
                Value key = evaluate(*expr.items[i], scope);
                require_hashable(key);
                dict.set(std::move(key), evaluate(*expr.items[i + 1], scope));
            }
            return Value::dict(std::move(dict));
        }
        case Expr::Kind::Attribute:
            return get_attribute(evaluate(*expr.operand, scope), expr.name);
        case Expr::Kind::Subscript:
            return get_item(evaluate(*expr.operand, scope), evaluate(*expr.items[0], scope));
        case Expr::Kind::Slice: {
            const Value object = evaluate(*expr.operand, scope);
            const auto part = [&](size_t i) {
                return expr.items[i] ? evaluate(*expr.items[i], scope) : Value::none();
            };
            return get_slice(budget_, object, part(0), part(1), part(2));
        }
        case Expr::Kind::Call:
            return evaluate_call(expr, scope);
        case Expr::Kind::Filter:
            return evaluate_filter(expr.filter, evaluate(*expr.operand, scope), scope);
        case Expr::Kind::Test: {
            if (expr.filter.test == nullptr) raise("No test named '{}' found.", expr.filter.name);
            const Value value = evaluate(*expr.operand, scope);
            CallArgs args = evaluate_args(expr.filter.args, scope);
            return Value::boolean(expr.filter.test(*this, value, args) != expr.negated);
        }
        case Expr::Kind::Unary:
            if (expr.name == "not") return Value::boolean(!truthy(evaluate(*expr.operand, scope)));
            return unary_operation(expr.name, evaluate(*expr.operand, scope));
        case Expr::Kind::Binary: {
            Value left = evaluate(*expr.items[0], scope);
            if (expr.name == "and") return truthy(left) ? evaluate(*expr.items[1], scope) : left;
            if (expr.name == "or") return truthy(left) ? left : evaluate(*expr.items[1], scope);
            return binary_operation(budget_, expr.name, left, evaluate(*expr.items[1], scope));
        }
        case Expr::Kind::Compare:
            return evaluate_compare(expr, scope);
        case Expr::Kind::Conditional:
            if (truthy(evaluate(*expr.items[1], scope))) return evaluate(*expr.items[0], scope);
            if (expr.items[2]) return evaluate(*expr.items[2], scope);
            return Value::undefined(
                "the inline if expression evaluated to false and no else section was defined");
    }
    return Value();
}

// a < b < c is (a < b) and (b < c), as in Python.
Value Interpreter::evaluate_compare(const Expr& expr, const Scope& scope) {
    Value left = evaluate(*expr.operand, scope);
    for (size_t i = 0; i < expr.ops.size(); ++i) {
        Value right = evaluate(*expr.items[i], scope);
        const std::string& op = expr.ops[i];
        bool result = false;
        if (op == "==") {
            result = equals(left, right);
        } else if (op == "!=") {
            result = !equals(left, right);
        } else if (op == "in" || op == "notin") {
            result = contains(right, left) == (op == "in");
        } else {
            const int order = compare(left, right, op);
            result = op == "<"    ? order < 0
                     : op == "<=" ? order <= 0
                     : op == ">"  ? order > 0
                                  : order >= 0;
        }
        if (!result) return Value::boolean(false);
        left = std::move(right);
    }
    return Value::boolean(true);
}

Value Interpreter::evaluate_call(const Expr& expr, const Scope& scope,
                                 std::vector<std::pair<std::string, Value>> extra_keywords) {
    const Value callee = evaluate(*expr.operand, scope);
    CallArgs args = evaluate_args(expr.args, scope);
    for (auto& keyword : extra_keywords) args.keywords.push_back(std::move(keyword));
    return call(callee, args);
}

Value Interpreter::evaluate_filter(const FilterCall& filter, const Value& input,
                                   const Scope& scope) {
    if (filter.filter == nullptr) raise("No filter named '{}' found.", filter.name);
    CallArgs args = evaluate_args(filter.args, scope);
    return filter.filter(*this, input, args);
}

CallArgs Interpreter::evaluate_args(const Arguments& args, const Scope& scope) {
    CallArgs call;
    call.positional.reserve(args.positional.size());
    for (const ExprPtr& arg : args.positional) call.positional.push_back(evaluate(*arg, scope));
    for (const auto& [name, value] : args.keywords)
        call.keywords.emplace_back(name, evaluate(*value, scope));
    return call;
}

}  // namespace ladder::tokenizer::jinja
