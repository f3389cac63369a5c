// The parsed template: expressions and statements as the parser builds them
// and the interpreter walks them. Plain records; the tree owns its children.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ladder/tokenizer/jinja/value.h"

namespace ladder::tokenizer::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;
class Interpreter;
struct CallArgs;

struct Arguments {
    std::vector<ExprPtr> positional;
    std::vector<std::pair<std::string, ExprPtr>> keywords;
};

// A filter or test as written (`| name(args)`, `is name args`), resolved to
// its implementation when parsed: an unknown name is a syntax error, as in jinja2.
using FilterFunction = Value (*)(Interpreter&, const Value&, CallArgs&);
using TestFunction = bool (*)(Interpreter&, const Value&, CallArgs&);
struct FilterCall {
    std::string name;
    Arguments args;
    FilterFunction filter = nullptr;  // set for filters
    TestFunction test = nullptr;      // set for tests
    int line = 0;
};

struct Expr {
    enum class Kind {
        Literal,      // literal
        Name,         // name
        List,         // items
        Tuple,        // items
        Dict,         // items: key, value, key, value, ...
        Attribute,    // operand.name
        Subscript,    // operand[items[0]]
        Slice,        // operand[items[0]:items[1]:items[2]], any of them null
        Call,         // operand(args)
        Filter,       // operand | filter
        Test,         // operand is [not] filter (negated)
        Unary,        // name (-, +, not) operand
        Binary,       // items[0] name items[1]; name is + - * / // % ** ~ and or
        Compare,      // operand, then ops[i] items[i]: == != < <= > >= in notin
        Conditional,  // items: value, condition, otherwise (null: undefined)
    };
    Kind kind = Kind::Literal;
    int line = 0;
    Value literal;
    std::string name;
    ExprPtr operand;
    std::vector<ExprPtr> items;
    std::vector<std::string> ops;
    Arguments args;
    FilterCall filter;
    bool negated = false;
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

// What set and for assign to: a name, several names (unpacking a sequence),
// or an attribute of a namespace (`ns.count`).
struct AssignTarget {
    std::vector<std::string> names;
    std::string attribute;  // set: names holds the one namespace variable
    bool unpack = false;
};

struct Parameter {
    std::string name;
    ExprPtr default_value;  // null: required
};

struct Stmt {
    enum class Kind {
        Text,         // text
        Output,       // {{ expr }}
        If,           // branches (condition, body), then else_body
        For,          // for target in expr [if condition] [recursive]: body, else_body
        Set,          // target = expr
        SetBlock,     // target = body rendered, through filters
        Macro,        // name(params): body
        CallBlock,    // expr (a call) with caller(params): body
        FilterBlock,  // body through filters
        With,         // assignments, then body in a scope of its own
        Break,
        Continue,
        Generation,  // transformers' {% generation %}: the body as it is
    };
    Kind kind = Kind::Text;
    int line = 0;
    std::string text;
    ExprPtr expr;
    std::vector<std::pair<ExprPtr, Body>> branches;
    Body body;
    Body else_body;
    AssignTarget target;
    ExprPtr condition;
    bool recursive = false;
    std::string name;
    std::vector<Parameter> params;
    std::vector<FilterCall> filters;
    std::vector<std::pair<std::string, ExprPtr>> assignments;
};

}  // namespace ladder::tokenizer::jinja
