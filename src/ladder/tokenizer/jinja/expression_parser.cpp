// The expression half of the parser, one function per precedence level as
// jinja2 orders them (loosest first): conditional, or, and, not, comparisons,
// + -, ~, * / // %, **, unary - +, then primaries with their postfix
// operators (.attr, [item], (call)) and filters and tests.
#include "ladder/tokenizer/jinja/error.h"
#include "ladder/tokenizer/jinja/filters.h"
#include "ladder/tokenizer/jinja/parser.h"
#include "ladder/tokenizer/jinja/test_functions.h"

namespace ladder::tokenizer::jinja {
namespace {

ExprPtr make_expr(Expr::Kind kind, int line) {
    auto expr = std::make_unique<Expr>();
    expr->kind = kind;
    expr->line = line;
    return expr;
}

ExprPtr literal(Value value, int line) {
    ExprPtr expr = make_expr(Expr::Kind::Literal, line);
    expr->literal = std::move(value);
    return expr;
}

}  // namespace

const Token& Parser::peek(size_t ahead) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
}

const Token& Parser::advance() {
    const Token& token = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return token;
}

bool Parser::at_operator(std::string_view op) const {
    return current().type == Token::Type::Operator && current().text == op;
}

bool Parser::at_name(std::string_view name) const {
    return current().type == Token::Type::Name && current().text == name;
}

bool Parser::skip_operator(std::string_view op) {
    if (!at_operator(op)) return false;
    advance();
    return true;
}

bool Parser::skip_name(std::string_view name) {
    if (!at_name(name)) return false;
    advance();
    return true;
}

void Parser::expect_operator(std::string_view op) {
    if (!skip_operator(op)) fail_unexpected(fmt::format("'{}'", op));
}

void Parser::expect_block_end() {
    if (current().type != Token::Type::BlockEnd) fail_unexpected("end of statement block");
    advance();
}

std::string Parser::expect_name() {
    if (current().type != Token::Type::Name) fail_unexpected("a name");
    return advance().text;
}

void Parser::fail(std::string_view message) const {
    raise("syntax error at line {}: {}", current().line, message);
}

void Parser::fail_unexpected(std::string_view expected) const {
    const Token& token = current();
    std::string found;
    switch (token.type) {
        case Token::Type::End:
            found = "end of template";
            break;
        case Token::Type::BlockEnd:
            found = "end of statement block";
            break;
        case Token::Type::VariableEnd:
            found = "end of print statement";
            break;
        case Token::Type::BlockBegin:
        case Token::Type::VariableBegin:
            found = "begin of a tag";
            break;
        case Token::Type::Data:
            found = "template text";
            break;
        default:
            found = "'" + token.text + "'";
    }
    fail(fmt::format("unexpected {}, expected {}", found, expected));
}

ExprPtr Parser::binary(std::string op, ExprPtr left, ExprPtr right, int line) {
    ExprPtr expr = make_expr(Expr::Kind::Binary, line);
    expr->name = std::move(op);
    expr->items.push_back(std::move(left));
    expr->items.push_back(std::move(right));
    return expr;
}

ExprPtr Parser::parse_expression(bool with_conditional) {
    DepthGuard guard(*this);
    ExprPtr expr = parse_or();
    if (!with_conditional) return expr;
    while (at_name("if")) {
        const int line = advance().line;
        ExprPtr condition = parse_or();
        ExprPtr otherwise = skip_name("else") ? parse_expression() : nullptr;
        ExprPtr conditional = make_expr(Expr::Kind::Conditional, line);
        conditional->items.push_back(std::move(expr));
        conditional->items.push_back(std::move(condition));
        conditional->items.push_back(std::move(otherwise));
        expr = std::move(conditional);
    }
    return expr;
}

ExprPtr Parser::parse_tuple(bool with_conditional) {
    const int line = current().line;
    ExprPtr first = parse_expression(with_conditional);
    if (!at_operator(",")) return first;
    ExprPtr tuple = make_expr(Expr::Kind::Tuple, line);
    tuple->items.push_back(std::move(first));
    while (skip_operator(",")) {
        const Token& next = current();
        if (next.type == Token::Type::BlockEnd || next.type == Token::Type::VariableEnd ||
            (next.type == Token::Type::Operator && next.text == ")")) {
            break;
        }
        tuple->items.push_back(parse_expression(with_conditional));
    }
    return tuple;
}

ExprPtr Parser::parse_or() {
    ExprPtr left = parse_and();
    while (at_name("or")) {
        const int line = advance().line;
        left = binary("or", std::move(left), parse_and(), line);
    }
    return left;
}

ExprPtr Parser::parse_and() {
    ExprPtr left = parse_not();
    while (at_name("and")) {
        const int line = advance().line;
        left = binary("and", std::move(left), parse_not(), line);
    }
    return left;
}

ExprPtr Parser::parse_not() {
    if (at_name("not")) {
        DepthGuard guard(*this);
        ExprPtr expr = make_expr(Expr::Kind::Unary, advance().line);
        expr->name = "not";
        expr->operand = parse_not();
        return expr;
    }
    return parse_compare();
}

ExprPtr Parser::parse_compare() {
    const int line = current().line;
    ExprPtr first = parse_math1();
    ExprPtr compare;
    for (;;) {
        std::string op;
        const Token& token = current();
        if (token.type == Token::Type::Operator &&
            (token.text == "==" || token.text == "!=" || token.text == "<" || token.text == "<=" ||
             token.text == ">" || token.text == ">=")) {
            op = token.text;
            advance();
        } else if (at_name("in")) {
            op = "in";
            advance();
        } else if (at_name("not") && peek().type == Token::Type::Name && peek().text == "in") {
            op = "notin";
            advance();
            advance();
        } else {
            break;
        }
        if (!compare) {
            compare = make_expr(Expr::Kind::Compare, line);
            compare->operand = std::move(first);
        }
        compare->ops.push_back(op);
        compare->items.push_back(parse_math1());
    }
    return compare ? std::move(compare) : std::move(first);
}

ExprPtr Parser::parse_math1() {
    ExprPtr left = parse_concat();
    while (at_operator("+") || at_operator("-")) {
        const Token& op = advance();
        left = binary(op.text, std::move(left), parse_concat(), op.line);
    }
    return left;
}

ExprPtr Parser::parse_concat() {
    ExprPtr left = parse_math2();
    while (at_operator("~")) {
        const int line = advance().line;
        left = binary("~", std::move(left), parse_math2(), line);
    }
    return left;
}

ExprPtr Parser::parse_math2() {
    ExprPtr left = parse_pow();
    while (at_operator("*") || at_operator("/") || at_operator("//") || at_operator("%")) {
        const Token& op = advance();
        left = binary(op.text, std::move(left), parse_pow(), op.line);
    }
    return left;
}

ExprPtr Parser::parse_pow() {
    ExprPtr left = parse_unary(true);
    while (at_operator("**")) {
        const int line = advance().line;
        left = binary("**", std::move(left), parse_unary(true), line);
    }
    return left;
}

// A sign binds tighter than filters on its operand's right: -x|abs is abs(-x).
ExprPtr Parser::parse_unary(bool with_filter) {
    DepthGuard guard(*this);
    ExprPtr node;
    if (at_operator("-") || at_operator("+")) {
        const Token& sign = advance();
        node = make_expr(Expr::Kind::Unary, sign.line);
        node->name = sign.text;
        node->operand = parse_unary(false);
    } else {
        node = parse_primary();
    }
    node = parse_postfix(std::move(node));
    if (with_filter) node = parse_filter_expr(std::move(node));
    return node;
}

ExprPtr Parser::parse_primary() {
    const Token& token = current();
    const int line = token.line;
    switch (token.type) {
        case Token::Type::Name: {
            advance();
            if (token.text == "true" || token.text == "True")
                return literal(Value::boolean(true), line);
            if (token.text == "false" || token.text == "False")
                return literal(Value::boolean(false), line);
            if (token.text == "none" || token.text == "None") return literal(Value::none(), line);
            ExprPtr name = make_expr(Expr::Kind::Name, line);
            name->name = token.text;
            return name;
        }
        case Token::Type::String: {
            std::string text;
            while (current().type == Token::Type::String)
                text += advance().text;  // "a" "b" is "ab"
            return literal(Value::string(std::move(text)), line);
        }
        case Token::Type::Integer:
            advance();
            return literal(Value::integer(token.integer), line);
        case Token::Type::Float:
            advance();
            return literal(Value::number(token.number), line);
        case Token::Type::Operator:
            if (token.text == "(") return parse_parenthesized();
            if (token.text == "[") return parse_list();
            if (token.text == "{") return parse_dict();
            break;
        default:
            break;
    }
    fail_unexpected("an expression");
}

ExprPtr Parser::parse_parenthesized() {
    const int line = advance().line;  // (
    if (skip_operator(")")) return make_expr(Expr::Kind::Tuple, line);
    ExprPtr expr = parse_tuple();
    expect_operator(")");
    // (a) is a; (a,) and (a, b) are tuples, built by parse_tuple.
    return expr;
}

ExprPtr Parser::parse_list() {
    ExprPtr list = make_expr(Expr::Kind::List, advance().line);  // [
    while (!skip_operator("]")) {
        if (!list->items.empty()) {
            expect_operator(",");
            if (skip_operator("]")) break;
        }
        list->items.push_back(parse_expression());
    }
    return list;
}

ExprPtr Parser::parse_dict() {
    ExprPtr dict = make_expr(Expr::Kind::Dict, advance().line);  // {
    while (!skip_operator("}")) {
        if (!dict->items.empty()) {
            expect_operator(",");
            if (skip_operator("}")) break;
        }
        dict->items.push_back(parse_expression());
        expect_operator(":");
        dict->items.push_back(parse_expression());
    }
    return dict;
}

ExprPtr Parser::parse_postfix(ExprPtr node) {
    for (;;) {
        if (at_operator(".") || at_operator("[")) {
            node = parse_subscript(std::move(node));
        } else if (at_operator("(")) {
            node = parse_call(std::move(node));
        } else {
            return node;
        }
    }
}

ExprPtr Parser::parse_filter_expr(ExprPtr node) {
    for (;;) {
        if (at_operator("|")) {
            const int line = advance().line;
            ExprPtr filter = make_expr(Expr::Kind::Filter, line);
            filter->operand = std::move(node);
            filter->filter = parse_filter_call(false);
            node = std::move(filter);
        } else if (at_name("is")) {
            const int line = advance().line;
            ExprPtr test = make_expr(Expr::Kind::Test, line);
            test->operand = std::move(node);
            test->negated = skip_name("not");
            test->filter = parse_filter_call(true);
            node = std::move(test);
        } else if (at_operator("(")) {
            node = parse_call(std::move(node));
        } else {
            return node;
        }
    }
}

ExprPtr Parser::parse_subscript(ExprPtr node) {
    const Token& token = advance();
    if (token.text == ".") {
        const Token& attribute = current();
        if (attribute.type == Token::Type::Integer) {  // x.0 is x[0]
            ExprPtr item = make_expr(Expr::Kind::Subscript, attribute.line);
            item->operand = std::move(node);
            item->items.push_back(literal(Value::integer(advance().integer), attribute.line));
            return item;
        }
        ExprPtr expr = make_expr(Expr::Kind::Attribute, token.line);
        expr->operand = std::move(node);
        expr->name = expect_name();
        return expr;
    }
    // [index] or [start:stop:step]
    std::array<ExprPtr, 3> parts;
    size_t part = 0;
    bool is_slice = false;
    while (!at_operator("]")) {
        if (skip_operator(":")) {
            is_slice = true;
            if (++part > 2) fail_unexpected("']'");
            continue;
        }
        if (parts[part]) fail_unexpected("':' or ']'");
        parts[part] = parse_expression();
    }
    advance();  // ]
    if (!is_slice && !parts[0]) fail("an empty subscript");
    ExprPtr expr = make_expr(is_slice ? Expr::Kind::Slice : Expr::Kind::Subscript, token.line);
    expr->operand = std::move(node);
    expr->items.push_back(std::move(parts[0]));
    if (is_slice) {
        expr->items.push_back(std::move(parts[1]));
        expr->items.push_back(std::move(parts[2]));
    }
    return expr;
}

ExprPtr Parser::parse_call(ExprPtr node) {
    ExprPtr call = make_expr(Expr::Kind::Call, current().line);
    call->operand = std::move(node);
    call->args = parse_call_args();
    return call;
}

Arguments Parser::parse_call_args() {
    Arguments args;
    expect_operator("(");
    bool first = true;
    while (!skip_operator(")")) {
        if (!first) {
            expect_operator(",");
            if (skip_operator(")")) break;
        }
        first = false;
        if (current().type == Token::Type::Name && peek().type == Token::Type::Operator &&
            peek().text == "=") {
            std::string name = advance().text;
            advance();  // =
            args.keywords.emplace_back(std::move(name), parse_expression());
            continue;
        }
        if (!args.keywords.empty()) fail("a positional argument follows a keyword argument");
        args.positional.push_back(parse_expression());
    }
    return args;
}

FilterCall Parser::parse_filter_call(bool is_test) {
    FilterCall call;
    call.line = current().line;
    call.name = expect_name();
    while (skip_operator(".")) call.name += "." + expect_name();
    // An unknown name is checked once the whole template is parsed (see
    // check_filters_exist): inside an if it is an error only when reached.
    if (is_test) {
        call.test = find_test(call.name);
    } else {
        call.filter = find_filter(call.name);
    }
    if (at_operator("(")) {
        call.args = parse_call_args();
        return call;
    }
    // A test takes one argument without parentheses: `is divisibleby 3`,
    // `is sameas false`, but not `is defined and ...`.
    const Token& next = current();
    const bool starts_argument =
        next.type == Token::Type::String || next.type == Token::Type::Integer ||
        next.type == Token::Type::Float ||
        (next.type == Token::Type::Name && next.text != "else" && next.text != "or" &&
         next.text != "and" && next.text != "is" && next.text != "if" && next.text != "in" &&
         next.text != "not") ||
        (next.type == Token::Type::Operator && (next.text == "[" || next.text == "{"));
    if (is_test && starts_argument) {
        call.args.positional.push_back(parse_postfix(parse_primary()));
    }
    return call;
}

}  // namespace ladder::tokenizer::jinja
