// Runs a parsed template: statements write to the output, expressions are
// evaluated with jinja2's scoping (a for loop's iterations, macros, call,
// filter and set blocks and with get scopes of their own; if does not), and
// every step is charged to the rendering's budget.
#pragma once

#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ladder/tokenizer/jinja/ast.h"
#include "ladder/tokenizer/jinja/call_args.h"
#include "ladder/tokenizer/jinja/limits.h"
#include "ladder/tokenizer/jinja/value.h"

namespace ladder::tokenizer::jinja {

class Namespace;

// Variables of one scope; lookups walk out to the enclosing ones. Macros keep
// the scope they were defined in, so they see later changes to it.
class Scope {
public:
    explicit Scope(std::shared_ptr<Scope> parent = nullptr) : parent_(std::move(parent)) {}

    const Value* find(std::string_view name) const;
    void set(std::string_view name, Value value);

private:
    std::shared_ptr<Scope> parent_;
    std::vector<std::pair<std::string, Value>> variables_;
};

class Interpreter {
public:
    using Clock = std::function<std::tm()>;
    Interpreter(const RenderLimits& limits, Clock clock)
        : budget_(limits), clock_(std::move(clock)) {}

    std::string render(const Body& body, const std::shared_ptr<Scope>& globals);

    Budget& budget() { return budget_; }
    // The local time strftime_now formats.
    std::tm now() const { return clock_(); }
    // Calls a function, macro or method; TemplateError if the value is not callable.
    Value call(const Value& callee, CallArgs& args);
    // The line of the statement being run, for error messages.
    int line() const { return line_; }
    // Keeps a namespace() to be cleared when the rendering ends (see Namespace::clear).
    void adopt(std::shared_ptr<Namespace> ns) { namespaces_.push_back(std::move(ns)); }
    ~Interpreter();

    // A macro (or a call block's caller) called with these arguments.
    Value call_macro(const Stmt& macro, const std::shared_ptr<Scope>& closure, CallArgs& args,
                     const Value& caller);

private:
    enum class Flow { Normal, Break, Continue };

    Flow execute(const Body& body, const std::shared_ptr<Scope>& scope, std::string& out);
    Flow execute(const Stmt& stmt, const std::shared_ptr<Scope>& scope, std::string& out);
    Flow execute_for(const Stmt& stmt, const std::shared_ptr<Scope>& scope, std::string& out);
    void run_loop(const Stmt& stmt, const std::shared_ptr<Scope>& scope, const Value& iterable,
                  int depth0, std::string& out);
    void execute_set(const Stmt& stmt, const std::shared_ptr<Scope>& scope);
    void execute_call_block(const Stmt& stmt, const std::shared_ptr<Scope>& scope,
                            std::string& out);
    void assign(const AssignTarget& target, const Value& value, Scope& scope);
    std::string render_in_child_scope(const Body& body, const std::shared_ptr<Scope>& scope);
    Value apply_filters(const std::vector<FilterCall>& filters, Value value, const Scope& scope);
    void append(std::string& out, std::string_view text);

    // expressions (interpreter_expressions.cpp)
    Value evaluate(const Expr& expr, const Scope& scope);
    Value evaluate_compare(const Expr& expr, const Scope& scope);
    Value evaluate_call(const Expr& expr, const Scope& scope,
                        std::vector<std::pair<std::string, Value>> extra_keywords = {});
    Value evaluate_filter(const FilterCall& filter, const Value& input, const Scope& scope);
    CallArgs evaluate_args(const Arguments& args, const Scope& scope);

    Budget budget_;
    Clock clock_;
    std::vector<std::shared_ptr<Namespace>> namespaces_;
    int call_depth_ = 0;
    int line_ = 0;
};

}  // namespace ladder::tokenizer::jinja
