// The statement half of the parser: text, {{ output }} and {% tags %}.
#include <algorithm>

#include "ladder/tokenizer/jinja/error.h"
#include "ladder/tokenizer/jinja/filters.h"
#include "ladder/tokenizer/jinja/parser.h"

namespace ladder::tokenizer::jinja {
namespace {

// Deeper nesting than any real template uses; it bounds the recursion of
// parsing and rendering.
constexpr int kMaxNesting = 128;

StmtPtr make_stmt(Stmt::Kind kind, int line) {
    auto stmt = std::make_unique<Stmt>();
    stmt->kind = kind;
    stmt->line = line;
    return stmt;
}

// jinja2 rejects an unknown filter or test when it compiles the template,
// unless it sits in an if statement or an inline if, where it is an error
// only if rendering reaches it. `soft` is that: the frame of an if.
void check_filters_exist(const Expr& expr, bool soft);

void check_filter_call(const FilterCall& call, bool is_test, bool soft) {
    const bool known = is_test ? call.test != nullptr : call.filter != nullptr;
    if (!known && !soft) {
        raise("syntax error at line {}: no {} named '{}'", call.line, is_test ? "test" : "filter",
              call.name);
    }
    for (const ExprPtr& arg : call.args.positional) check_filters_exist(*arg, soft);
    for (const auto& keyword : call.args.keywords) check_filters_exist(*keyword.second, soft);
}

void check_filters_exist(const Expr& expr, bool soft) {
    if (expr.kind == Expr::Kind::Conditional) soft = true;
    if (expr.kind == Expr::Kind::Filter || expr.kind == Expr::Kind::Test) {
        check_filter_call(expr.filter, expr.kind == Expr::Kind::Test, soft);
    }
    if (expr.operand) check_filters_exist(*expr.operand, soft);
    for (const ExprPtr& item : expr.items) {
        if (item) check_filters_exist(*item, soft);
    }
    for (const ExprPtr& arg : expr.args.positional) check_filters_exist(*arg, soft);
    for (const auto& keyword : expr.args.keywords) check_filters_exist(*keyword.second, soft);
}

void check_filters_exist(const Body& body, bool soft) {
    for (const StmtPtr& stmt : body) {
        const Stmt& s = *stmt;
        if (s.expr) check_filters_exist(*s.expr, soft);
        for (const auto& [condition, branch] : s.branches) {
            check_filters_exist(*condition, true);
            check_filters_exist(branch, true);
        }
        if (s.kind == Stmt::Kind::If) {
            check_filters_exist(s.else_body, true);
            continue;
        }
        // Loops, macros and blocks get frames of their own, which are not soft.
        if (s.condition) check_filters_exist(*s.condition, false);
        for (const Parameter& param : s.params) {
            if (param.default_value) check_filters_exist(*param.default_value, false);
        }
        for (const FilterCall& filter : s.filters) check_filter_call(filter, false, false);
        for (const auto& assignment : s.assignments) check_filters_exist(*assignment.second, false);
        check_filters_exist(s.body, false);
        check_filters_exist(s.else_body, false);
    }
}

}  // namespace

Body parse(const std::vector<Token>& tokens) {
    Body body = Parser(tokens).parse_template();
    check_filters_exist(body, false);
    return body;
}

Parser::DepthGuard::DepthGuard(Parser& parser) : parser_(parser) {
    if (++parser_.depth_ > kMaxNesting) {
        --parser_.depth_;
        parser_.fail("the template nests more than 128 levels deep");
    }
}

Body Parser::parse_template() {
    Body body;
    parse_body(body, {});
    return body;
}

std::string Parser::parse_body(Body& body, std::initializer_list<std::string_view> end_tags) {
    DepthGuard guard(*this);
    for (;;) {
        const Token& token = current();
        switch (token.type) {
            case Token::Type::Data: {
                StmtPtr text = make_stmt(Stmt::Kind::Text, token.line);
                text->text = token.text;
                body.push_back(std::move(text));
                advance();
                break;
            }
            case Token::Type::VariableBegin: {
                StmtPtr output = make_stmt(Stmt::Kind::Output, token.line);
                advance();
                output->expr = parse_tuple();
                if (current().type != Token::Type::VariableEnd)
                    fail_unexpected("end of print statement");
                advance();
                body.push_back(std::move(output));
                break;
            }
            case Token::Type::BlockBegin: {
                const Token& name = peek();
                if (name.type == Token::Type::Name &&
                    std::find(end_tags.begin(), end_tags.end(), name.text) != end_tags.end()) {
                    advance();
                    advance();
                    return name.text;
                }
                body.push_back(parse_statement());
                break;
            }
            case Token::Type::End:
                if (end_tags.size() > 0) {
                    fail(fmt::format("unexpected end of template, expected '{}'",
                                     *end_tags.begin()));
                }
                return "";
            default:
                fail_unexpected("template text or a tag");
        }
    }
}

StmtPtr Parser::parse_statement() {
    advance();  // {%
    const Token& token = current();
    if (token.type != Token::Type::Name) fail_unexpected("a tag name");
    const int line = token.line;
    const std::string tag = token.text;
    advance();
    if (tag == "if") return parse_if(line);
    if (tag == "for") return parse_for(line);
    if (tag == "set") return parse_set(line);
    if (tag == "macro") return parse_macro(line);
    if (tag == "call") return parse_call_block(line);
    if (tag == "filter") return parse_filter_block(line);
    if (tag == "with") return parse_with(line);
    if (tag == "break" || tag == "continue") {
        if (loop_depth_ == 0) fail(fmt::format("'{}' outside of a loop", tag));
        expect_block_end();
        return make_stmt(tag == "break" ? Stmt::Kind::Break : Stmt::Kind::Continue, line);
    }
    if (tag == "generation") {
        StmtPtr stmt = make_stmt(Stmt::Kind::Generation, line);
        expect_block_end();
        parse_body(stmt->body, {"endgeneration"});
        expect_block_end();
        return stmt;
    }
    fail(fmt::format("unknown tag '{}'", tag));
}

StmtPtr Parser::parse_if(int line) {
    StmtPtr stmt = make_stmt(Stmt::Kind::If, line);
    for (;;) {
        ExprPtr condition = parse_tuple(false);
        expect_block_end();
        Body body;
        const std::string end = parse_body(body, {"elif", "else", "endif"});
        stmt->branches.emplace_back(std::move(condition), std::move(body));
        if (end == "elif") continue;
        if (end == "else") {
            expect_block_end();
            parse_body(stmt->else_body, {"endif"});
        }
        expect_block_end();
        return stmt;
    }
}

StmtPtr Parser::parse_for(int line) {
    StmtPtr stmt = make_stmt(Stmt::Kind::For, line);
    stmt->target = parse_assign_target(false);
    if (!skip_name("in")) fail_unexpected("'in'");
    stmt->expr = parse_tuple(false);
    if (skip_name("if")) stmt->condition = parse_expression();
    stmt->recursive = skip_name("recursive");
    expect_block_end();
    ++loop_depth_;
    const std::string end = parse_body(stmt->body, {"endfor", "else"});
    --loop_depth_;
    if (end == "else") {
        expect_block_end();
        parse_body(stmt->else_body, {"endfor"});
    }
    expect_block_end();
    return stmt;
}

StmtPtr Parser::parse_set(int line) {
    AssignTarget target = parse_assign_target(true);
    if (skip_operator("=")) {
        StmtPtr stmt = make_stmt(Stmt::Kind::Set, line);
        stmt->target = std::move(target);
        stmt->expr = parse_tuple();
        expect_block_end();
        return stmt;
    }
    StmtPtr stmt = make_stmt(Stmt::Kind::SetBlock, line);
    if (target.unpack || !target.attribute.empty()) fail("a block set assigns to one name");
    stmt->target = std::move(target);
    if (skip_operator("|")) stmt->filters = parse_filter_chain();
    expect_block_end();
    const int outer_loops = std::exchange(loop_depth_, 0);
    parse_body(stmt->body, {"endset"});
    loop_depth_ = outer_loops;
    expect_block_end();
    return stmt;
}

StmtPtr Parser::parse_macro(int line) {
    StmtPtr stmt = make_stmt(Stmt::Kind::Macro, line);
    stmt->name = expect_name();
    stmt->params = parse_parameters();
    expect_block_end();
    const int outer_loops = std::exchange(loop_depth_, 0);
    parse_body(stmt->body, {"endmacro"});
    loop_depth_ = outer_loops;
    if (current().type == Token::Type::Name && current().text == stmt->name) advance();
    expect_block_end();
    return stmt;
}

StmtPtr Parser::parse_call_block(int line) {
    StmtPtr stmt = make_stmt(Stmt::Kind::CallBlock, line);
    if (at_operator("(")) stmt->params = parse_parameters();
    stmt->expr = parse_expression();
    if (stmt->expr->kind != Expr::Kind::Call) fail("expected a call after 'call'");
    expect_block_end();
    const int outer_loops = std::exchange(loop_depth_, 0);
    parse_body(stmt->body, {"endcall"});
    loop_depth_ = outer_loops;
    expect_block_end();
    return stmt;
}

StmtPtr Parser::parse_filter_block(int line) {
    StmtPtr stmt = make_stmt(Stmt::Kind::FilterBlock, line);
    stmt->filters = parse_filter_chain();
    expect_block_end();
    parse_body(stmt->body, {"endfilter"});
    expect_block_end();
    return stmt;
}

StmtPtr Parser::parse_with(int line) {
    StmtPtr stmt = make_stmt(Stmt::Kind::With, line);
    while (current().type != Token::Type::BlockEnd) {
        if (!stmt->assignments.empty() && !skip_operator(",")) fail_unexpected("','");
        std::string name = expect_name();
        expect_operator("=");
        stmt->assignments.emplace_back(std::move(name), parse_expression());
    }
    expect_block_end();
    parse_body(stmt->body, {"endwith"});
    expect_block_end();
    return stmt;
}

AssignTarget Parser::parse_assign_target(bool allow_attribute) {
    AssignTarget target;
    const bool parenthesized = skip_operator("(");
    target.names.push_back(expect_name());
    if (allow_attribute && !parenthesized && skip_operator(".")) {
        target.attribute = expect_name();
        return target;
    }
    while (skip_operator(",")) {
        target.unpack = true;
        if (current().type != Token::Type::Name) break;  // a trailing comma
        target.names.push_back(expect_name());
    }
    if (parenthesized) {
        expect_operator(")");
        target.unpack = true;
    }
    return target;
}

std::vector<Parameter> Parser::parse_parameters() {
    std::vector<Parameter> params;
    expect_operator("(");
    while (!skip_operator(")")) {
        if (!params.empty()) expect_operator(",");
        if (skip_operator(")")) break;  // a trailing comma
        Parameter param;
        param.name = expect_name();
        if (skip_operator("=")) {
            param.default_value = parse_expression();
        } else if (!params.empty() && params.back().default_value) {
            fail("a parameter without a default follows one with a default");
        }
        params.push_back(std::move(param));
    }
    return params;
}

std::vector<FilterCall> Parser::parse_filter_chain() {
    std::vector<FilterCall> filters;
    do {
        filters.push_back(parse_filter_call(false));
    } while (skip_operator("|"));
    return filters;
}

}  // namespace ladder::tokenizer::jinja
