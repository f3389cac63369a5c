// The filters over sequences and mappings: first, join, map, select, sort, ...
#include <algorithm>

#include <fmt/format.h>

#include "ladder/tokenizer/jinja/call_args.h"
#include "ladder/tokenizer/jinja/error.h"
#include "ladder/tokenizer/jinja/filters.h"
#include "ladder/tokenizer/jinja/interpreter.h"
#include "ladder/tokenizer/jinja/objects.h"
#include "ladder/tokenizer/jinja/operations.h"
#include "ladder/tokenizer/jinja/python_string.h"
#include "ladder/tokenizer/jinja/test_functions.h"

namespace ladder::tokenizer::jinja {
namespace {

Value list_of(Interpreter& interpreter, std::vector<Value> items) {
    interpreter.budget().step(static_cast<int64_t>(items.size()));
    interpreter.budget().charge(items.size() * sizeof(Value));
    return Value::list(std::move(items));
}

Value generator_of(Interpreter& interpreter, std::vector<Value> items) {
    interpreter.budget().step(static_cast<int64_t>(items.size()));
    interpreter.budget().charge(items.size() * sizeof(Value));
    return generator(std::move(items));
}

Iterator* as_iterator(const Value& value) {
    return value.is_object() ? dynamic_cast<Iterator*>(&value.as_object()) : nullptr;
}

std::vector<Value> items_of(Interpreter& interpreter, const Value& value) {
    std::vector<Value> items = iterate(value);
    interpreter.budget().step(static_cast<int64_t>(items.size()));
    return items;
}

// The key sort, unique, min and max compare by: the attribute, lowered
// unless case_sensitive.
Value sort_key(const Value& item, const std::optional<std::string>& attribute,
               bool case_sensitive) {
    Value key = attribute ? attribute_path(item, *attribute) : item;
    if (!case_sensitive && key.is_string()) key = Value::string(py::lower(key.as_string()));
    return key;
}

Value filter_length(Interpreter&, const Value& value, CallArgs& args) {
    BoundArgs("length", args, {});
    return Value::integer(length(value));
}

Value filter_list(Interpreter& interpreter, const Value& value, CallArgs& args) {
    BoundArgs("list", args, {});
    return list_of(interpreter, iterate(value));
}

Value filter_first(Interpreter& interpreter, const Value& value, CallArgs& args) {
    BoundArgs("first", args, {});
    if (Iterator* iterator = as_iterator(value)) {  // next(iter(x)): takes one item only
        std::optional<Value> first = iterator->take_one();
        return first ? *first : Value::undefined("No first item, sequence was empty.");
    }
    const std::vector<Value> items = items_of(interpreter, value);
    return items.empty() ? Value::undefined("No first item, sequence was empty.") : items.front();
}

Value filter_last(Interpreter& interpreter, const Value& value, CallArgs& args) {
    BoundArgs("last", args, {});
    if (as_iterator(value) != nullptr) raise("'{}' object is not reversible", type_name(value));
    const std::vector<Value> items = items_of(interpreter, value);
    return items.empty() ? Value::undefined("No last item, sequence was empty.") : items.back();
}

Value filter_items(Interpreter& interpreter, const Value& value, CallArgs& args) {
    BoundArgs("items", args, {});
    if (value.is_undefined()) return generator({});
    if (!value.is_dict()) raise("Can only get item pairs from a mapping.");
    std::vector<Value> pairs;
    for (const auto& [key, item] : value.as_dict().entries())
        pairs.push_back(Value::tuple({key, item}));
    return generator_of(interpreter, std::move(pairs));
}

Value filter_join(Interpreter& interpreter, const Value& value, CallArgs& args) {
    const BoundArgs bound("join", args, {"d", "attribute"});
    const std::string separator = to_str(bound.get(0, Value::string("")));
    const std::optional<std::string> attribute = bound.string(1);
    std::string out;
    bool first = true;
    for (const Value& item : items_of(interpreter, value)) {
        if (!first) out += separator;
        first = false;
        out += to_str(attribute ? attribute_path(item, *attribute) : item);
        interpreter.budget().charge(out.size());
    }
    return Value::string(std::move(out));
}

Value filter_reverse(Interpreter& interpreter, const Value& value, CallArgs& args) {
    BoundArgs("reverse", args, {});
    if (value.is_string()) {
        std::vector<uint32_t> cps = py::code_points(value.as_string());
        std::reverse(cps.begin(), cps.end());
        std::string text = py::from_code_points(cps);
        return value.is_markup() ? Value::markup(std::move(text)) : Value::string(std::move(text));
    }
    // reversed() of a list is an iterator; of anything else, jinja2 makes a list.
    const bool reversible = value.is_list_or_tuple();
    std::vector<Value> items = items_of(interpreter, value);
    std::reverse(items.begin(), items.end());
    if (reversible) {
        return Value::object(std::make_shared<Iterator>(
            value.kind() == Value::Kind::List ? "list_reverseiterator" : "reversed",
            std::move(items)));
    }
    return list_of(interpreter, std::move(items));
}

// map(attribute='x', default=...) or map('filter', args...).
Value filter_map(Interpreter& interpreter, const Value& value, CallArgs& args) {
    std::vector<Value> out;
    if (!truthy(value)) return generator(std::move(out));  // jinja2 maps nothing over a false value
    if (args.positional.empty()) {
        const BoundArgs bound("map", args, {"attribute", "default"});
        const std::optional<std::string> attribute = bound.string(0);
        if (!attribute) raise("map() needs a filter name or attribute=");
        for (const Value& item : items_of(interpreter, value)) {
            Value mapped = attribute_path(item, *attribute);
            if (mapped.is_undefined() && bound.has(1)) mapped = bound.get(1, Value());
            out.push_back(std::move(mapped));
        }
        return generator_of(interpreter, std::move(out));
    }
    if (!args.positional.front().is_string()) raise("map() takes a filter name");
    const std::string name = args.positional.front().as_string();
    const FilterFunction filter = find_filter(name);
    if (filter == nullptr) raise("no filter named '{}'", name);
    CallArgs rest{{args.positional.begin() + 1, args.positional.end()}, args.keywords};
    for (const Value& item : items_of(interpreter, value)) {
        CallArgs call = rest;
        out.push_back(filter(interpreter, item, call));
    }
    return generator_of(interpreter, std::move(out));
}

// select/reject(test, args...) and selectattr/rejectattr(attribute, test, args...).
Value select_items(Interpreter& interpreter, const Value& value, CallArgs& args, bool by_attribute,
                   bool keep_if) {
    const char* function =
        by_attribute ? (keep_if ? "selectattr" : "rejectattr") : (keep_if ? "select" : "reject");
    size_t next = 0;
    std::optional<std::string> attribute;
    if (by_attribute) {
        if (args.positional.empty() || !args.positional[0].is_string()) {
            raise("{}() takes an attribute name", function);
        }
        attribute = args.positional[next++].as_string();
    }
    TestFunction test = nullptr;
    if (next < args.positional.size()) {
        if (!args.positional[next].is_string()) raise("{}() takes a test name", function);
        test = find_test(args.positional[next].as_string());
        if (test == nullptr) raise("no test named '{}'", args.positional[next].as_string());
        ++next;
    }
    const CallArgs test_args{
        {args.positional.begin() + static_cast<std::ptrdiff_t>(next), args.positional.end()},
        args.keywords};
    std::vector<Value> out;
    if (!truthy(value))
        return generator(std::move(out));  // jinja2 selects nothing from a false value
    for (const Value& item : items_of(interpreter, value)) {
        const Value subject = attribute ? attribute_path(item, *attribute) : item;
        CallArgs call = test_args;
        const bool passed = test ? test(interpreter, subject, call) : truthy(subject);
        if (passed == keep_if) out.push_back(item);
    }
    return generator_of(interpreter, std::move(out));
}

Value filter_sort(Interpreter& interpreter, const Value& value, CallArgs& args) {
    const BoundArgs bound("sort", args, {"reverse", "case_sensitive", "attribute"});
    const bool reverse = bound.boolean(0, false);
    const bool case_sensitive = bound.boolean(1, false);
    const std::optional<std::string> attribute = bound.string(2);
    std::vector<std::pair<Value, Value>> keyed;
    for (const Value& item : items_of(interpreter, value)) {
        keyed.emplace_back(sort_key(item, attribute, case_sensitive), item);
    }
    interpreter.budget().step(static_cast<int64_t>(keyed.size()) * 8);
    std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
        return reverse ? compare(b.first, a.first, "<") < 0 : compare(a.first, b.first, "<") < 0;
    });
    std::vector<Value> out;
    for (auto& entry : keyed) out.push_back(std::move(entry.second));
    return list_of(interpreter, std::move(out));
}

Value filter_dictsort(Interpreter& interpreter, const Value& value, CallArgs& args) {
    const BoundArgs bound("dictsort", args, {"case_sensitive", "by", "reverse"});
    const bool case_sensitive = bound.boolean(0, false);
    const std::string by = bound.string(1).value_or("key");
    const bool reverse = bound.boolean(2, false);
    if (by != "key" && by != "value") raise("You can only sort by either 'key' or 'value'");
    if (!value.is_dict()) raise("dictsort needs a mapping, not {}", type_name(value));
    std::vector<Value> pairs;
    for (const auto& [key, item] : value.as_dict().entries())
        pairs.push_back(Value::tuple({key, item}));
    const size_t part = by == "key" ? 0 : 1;
    std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& a, const Value& b) {
        const Value x = sort_key(a.items()[part], std::nullopt, case_sensitive);
        const Value y = sort_key(b.items()[part], std::nullopt, case_sensitive);
        return reverse ? compare(y, x, "<") < 0 : compare(x, y, "<") < 0;
    });
    return list_of(interpreter, std::move(pairs));
}

Value filter_unique(Interpreter& interpreter, const Value& value, CallArgs& args) {
    const BoundArgs bound("unique", args, {"case_sensitive", "attribute"});
    const bool case_sensitive = bound.boolean(0, false);
    const std::optional<std::string> attribute = bound.string(1);
    std::vector<Value> seen;
    std::vector<Value> out;
    for (const Value& item : items_of(interpreter, value)) {
        const Value key = sort_key(item, attribute, case_sensitive);
        interpreter.budget().step(static_cast<int64_t>(seen.size()));
        if (std::any_of(seen.begin(), seen.end(), [&](const Value& s) { return equals(s, key); }))
            continue;
        seen.push_back(key);
        out.push_back(item);
    }
    return generator_of(interpreter, std::move(out));
}

Value extreme(Interpreter& interpreter, const Value& value, CallArgs& args, bool largest) {
    const BoundArgs bound(largest ? "max" : "min", args, {"case_sensitive", "attribute"});
    const bool case_sensitive = bound.boolean(0, false);
    const std::optional<std::string> attribute = bound.string(1);
    const std::vector<Value> items = items_of(interpreter, value);
    if (items.empty()) {
        return Value::undefined(largest ? "No largest item, sequence was empty."
                                        : "No smallest item, sequence was empty.");
    }
    const Value* best = &items.front();
    Value best_key = sort_key(*best, attribute, case_sensitive);
    for (const Value& item : items) {
        Value key = sort_key(item, attribute, case_sensitive);
        const int order = compare(key, best_key, largest ? ">" : "<");
        if (largest ? order > 0 : order < 0) {
            best = &item;
            best_key = std::move(key);
        }
    }
    return *best;
}

Value filter_sum(Interpreter& interpreter, const Value& value, CallArgs& args) {
    const BoundArgs bound("sum", args, {"attribute", "start"});
    const std::optional<std::string> attribute = bound.string(0);
    Value total = bound.get(1, Value::integer(0));
    for (const Value& item : items_of(interpreter, value)) {
        total = binary_operation(interpreter.budget(), "+", total,
                                 attribute ? attribute_path(item, *attribute) : item);
    }
    return total;
}

Value filter_batch(Interpreter& interpreter, const Value& value, CallArgs& args) {
    const BoundArgs bound("batch", args, {"linecount", "fill_with"});
    const int64_t size = bound.integer(0, 0);
    if (size <= 0) raise("batch() needs a positive line count");
    std::vector<Value> batches;
    std::vector<Value> batch;
    for (const Value& item : items_of(interpreter, value)) {
        batch.push_back(item);
        if (static_cast<int64_t>(batch.size()) == size)
            batches.push_back(Value::list(std::exchange(batch, {})));
    }
    if (!batch.empty()) {
        if (bound.has(1)) {
            while (static_cast<int64_t>(batch.size()) < size)
                batch.push_back(bound.get(1, Value()));
        }
        batches.push_back(Value::list(std::move(batch)));
    }
    return generator_of(interpreter, std::move(batches));
}

constexpr FilterEntry kSequenceFilters[] = {
    {"batch", filter_batch},
    {"count", filter_length},
    {"dictsort", filter_dictsort},
    {"first", filter_first},
    {"items", filter_items},
    {"join", filter_join},
    {"last", filter_last},
    {"length", filter_length},
    {"list", filter_list},
    {"map", filter_map},
    {"max", [](Interpreter& i, const Value& v, CallArgs& a) { return extreme(i, v, a, true); }},
    {"min", [](Interpreter& i, const Value& v, CallArgs& a) { return extreme(i, v, a, false); }},
    {"reject", [](Interpreter& i, const Value& v,
                  CallArgs& a) { return select_items(i, v, a, false, false); }},
    {"rejectattr", [](Interpreter& i, const Value& v,
                      CallArgs& a) { return select_items(i, v, a, true, false); }},
    {"reverse", filter_reverse},
    {"select", [](Interpreter& i, const Value& v,
                  CallArgs& a) { return select_items(i, v, a, false, true); }},
    {"selectattr",
     [](Interpreter& i, const Value& v, CallArgs& a) { return select_items(i, v, a, true, true); }},
    {"sort", filter_sort},
    {"sum", filter_sum},
    {"unique", filter_unique},
};

}  // namespace

std::span<const FilterEntry> sequence_filters() { return kSequenceFilters; }

}  // namespace ladder::tokenizer::jinja
