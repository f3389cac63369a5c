#include "ladder/tokenizer/jinja/globals.h"

#include <ctime>

#include "ladder/tokenizer/jinja/error.h"
#include "ladder/tokenizer/jinja/objects.h"
#include "ladder/tokenizer/jinja/operations.h"

namespace ladder::tokenizer::jinja {
namespace {

// jinja2's sandbox refuses longer ranges.
constexpr int64_t kMaxRange = 100'000;

Value range(Interpreter& interpreter, CallArgs& args) {
    if (!args.keywords.empty()) raise("range() takes no keyword arguments");
    if (args.positional.empty() || args.positional.size() > 3) {
        raise("range expected 1 to 3 arguments, got {}", args.positional.size());
    }
    for (const Value& arg : args.positional) {
        if (!arg.is_integral())
            raise("'{}' object cannot be interpreted as an integer", type_name(arg));
    }
    const auto& p = args.positional;
    const int64_t start = p.size() == 1 ? 0 : p[0].as_int();
    const int64_t stop = p.size() == 1 ? p[0].as_int() : p[1].as_int();
    const int64_t step = p.size() == 3 ? p[2].as_int() : 1;
    if (step == 0) raise("range() arg 3 must not be zero");
    const long double count = step > 0
                                  ? (static_cast<long double>(stop) - start + step - 1) / step
                                  : (static_cast<long double>(start) - stop - step - 1) / -step;
    if (count > kMaxRange) {
        raise("Range too big. The sandbox blocks ranges larger than MAX_RANGE ({}).", kMaxRange);
    }
    std::vector<Value> items;
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step)
        items.push_back(Value::integer(i));
    interpreter.budget().step(static_cast<int64_t>(items.size()));
    return Value::list(std::move(items));
}

// dict(mapping or pairs, **kwargs), the arguments namespace() takes too.
Dict dict_of(CallArgs& args, std::string_view function) {
    Dict dict;
    if (args.positional.size() > 1)
        raise("{} expected at most 1 argument, got {}", function, args.positional.size());
    if (!args.positional.empty()) {
        const Value& source = args.positional.front();
        if (source.is_dict()) {
            dict = source.as_dict();
        } else {
            for (const Value& pair : iterate(source)) {
                if (!pair.is_list_or_tuple() || pair.items().size() != 2) {
                    raise("{}: each item must be a key and a value", function);
                }
                dict.set(pair.items()[0], pair.items()[1]);
            }
        }
    }
    for (const auto& [name, value] : args.keywords) dict.set(Value::string(name), value);
    return dict;
}

Value strftime_now(Interpreter& interpreter, CallArgs& args) {
    const BoundArgs bound("strftime_now", args, {"format"});
    const std::optional<std::string> format = bound.string(0);
    if (!format) raise("strftime_now() needs a format string");
    const std::tm now = interpreter.now();
    // strftime gives 0 both for an empty result and a short buffer: grow it a few times.
    for (size_t size = 256; size <= (size_t{1} << 16); size *= 4) {
        std::string buffer(size, '\0');
        const size_t n = std::strftime(buffer.data(), buffer.size(), format->c_str(), &now);
        if (n > 0 || format->empty()) {
            buffer.resize(n);
            return Value::string(std::move(buffer));
        }
    }
    return Value::string("");
}

class Cycler : public Object {
public:
    explicit Cycler(std::vector<Value> items) : state_(std::make_shared<State>()) {
        state_->items = std::move(items);
    }
    std::string type_name() const override { return "Cycler"; }
    Value attribute(const std::string& name) const override {
        // The functions share the state: next() advances the cycler they came from.
        if (name == "current") return state_->items[state_->position];
        if (name == "next") {
            return native_function("next", [state = state_](Interpreter&, CallArgs&) {
                Value value = state->items[state->position];
                state->position = (state->position + 1) % state->items.size();
                return value;
            });
        }
        if (name == "reset") {
            return native_function("reset", [state = state_](Interpreter&, CallArgs&) {
                state->position = 0;
                return Value::none();
            });
        }
        return Object::attribute(name);
    }

private:
    struct State {
        std::vector<Value> items;
        size_t position = 0;
    };
    std::shared_ptr<State> state_;
};

}  // namespace

void add_globals(Scope& scope) {
    scope.set("range", native_function("range", range));
    scope.set("dict", native_function("dict", [](Interpreter&, CallArgs& args) {
                  return Value::dict(dict_of(args, "dict"));
              }));
    scope.set("namespace",
              native_function("namespace", [](Interpreter& interpreter, CallArgs& args) {
                  auto ns = std::make_shared<Namespace>(dict_of(args, "namespace"));
                  interpreter.adopt(ns);
                  return Value::object(std::move(ns));
              }));
    scope.set("raise_exception",
              native_function("raise_exception", [](Interpreter&, CallArgs& args) -> Value {
                  const BoundArgs bound("raise_exception", args, {"message"});
                  throw TemplateError(to_str(bound.require(0)), /*raised_by_template=*/true);
              }));
    scope.set("strftime_now", native_function("strftime_now", strftime_now));
    scope.set("cycler", native_function("cycler", [](Interpreter&, CallArgs& args) {
                  if (args.positional.empty()) raise("cycler() needs at least one item");
                  return Value::object(std::make_shared<Cycler>(args.positional));
              }));
    scope.set("joiner", native_function("joiner", [](Interpreter&, CallArgs& args) {
                  const BoundArgs bound("joiner", args, {"sep"});
                  const std::string separator = to_str(bound.get(0, Value::string(", ")));
                  auto used = std::make_shared<bool>(false);
                  return native_function("joiner", [separator, used](Interpreter&, CallArgs&) {
                      return Value::string(std::exchange(*used, true) ? separator : "");
                  });
              }));
}

}  // namespace ladder::tokenizer::jinja
