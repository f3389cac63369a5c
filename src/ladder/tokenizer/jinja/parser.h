// Tokens -> statements and expressions, with jinja2's grammar and operator
// precedence. Unknown tags, filters and tests are syntax errors (jinja2
// rejects them when it compiles a template, before rendering anything).
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "ladder/tokenizer/jinja/ast.h"
#include "ladder/tokenizer/jinja/lexer.h"

namespace ladder::tokenizer::jinja {

// Throws TemplateError ("syntax error at line N: ...").
Body parse(const std::vector<Token>& tokens);

class Parser {
public:
    explicit Parser(const std::vector<Token>& tokens) : tokens_(tokens) {}

    Body parse_template();

private:
    // statements (statement_parser.cpp)
    // Parses until a {% tag %} named in end_tags, consuming "{%" and its name;
    // returns which one ended the body.
    std::string parse_body(Body& body, std::initializer_list<std::string_view> end_tags);
    StmtPtr parse_statement();
    StmtPtr parse_if(int line);
    StmtPtr parse_for(int line);
    StmtPtr parse_set(int line);
    StmtPtr parse_macro(int line);
    StmtPtr parse_call_block(int line);
    StmtPtr parse_filter_block(int line);
    StmtPtr parse_with(int line);
    AssignTarget parse_assign_target(bool allow_attribute);
    std::vector<Parameter> parse_parameters();
    std::vector<FilterCall> parse_filter_chain();

    // expressions (expression_parser.cpp)
public:
    ExprPtr parse_expression(bool with_conditional = true);
    // A comma-separated list makes a tuple; one expression stays itself.
    ExprPtr parse_tuple(bool with_conditional = true);

private:
    ExprPtr parse_or();
    ExprPtr parse_and();
    ExprPtr parse_not();
    ExprPtr parse_compare();
    ExprPtr parse_math1();
    ExprPtr parse_concat();
    ExprPtr parse_math2();
    ExprPtr parse_pow();
    ExprPtr parse_unary(bool with_filter);
    ExprPtr parse_primary();
    ExprPtr parse_list();
    ExprPtr parse_dict();
    ExprPtr parse_parenthesized();
    ExprPtr parse_postfix(ExprPtr node);
    ExprPtr parse_filter_expr(ExprPtr node);
    ExprPtr parse_subscript(ExprPtr node);
    ExprPtr parse_call(ExprPtr node);
    FilterCall parse_filter_call(bool is_test);
    Arguments parse_call_args();
    ExprPtr binary(std::string op, ExprPtr left, ExprPtr right, int line);

    // tokens
    const Token& current() const { return tokens_[pos_]; }
    const Token& peek(size_t ahead = 1) const;
    const Token& advance();
    bool at_operator(std::string_view op) const;
    bool at_name(std::string_view name) const;
    bool skip_operator(std::string_view op);
    bool skip_name(std::string_view name);
    void expect_operator(std::string_view op);
    void expect_block_end();
    std::string expect_name();
    [[noreturn]] void fail(std::string_view message) const;
    [[noreturn]] void fail_unexpected(std::string_view expected) const;

    // Guards the recursion of nested expressions and statements.
    class DepthGuard {
    public:
        explicit DepthGuard(Parser& parser);
        ~DepthGuard() { --parser_.depth_; }

    private:
        Parser& parser_;
    };

    const std::vector<Token>& tokens_;
    size_t pos_ = 0;
    int depth_ = 0;
    int loop_depth_ = 0;  // break and continue are allowed only inside a for
};

}  // namespace ladder::tokenizer::jinja
