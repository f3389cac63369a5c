// The Jinja interpreter against Python's jinja2: each case of
// tests/data/jinja_goldens.json (scripts/goldens/jinja_goldens.py) is one
// language feature rendered in transformers' chat template environment; the
// output must be byte for byte jinja2's, and where jinja2 fails, so must we.
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "jinja_test_support.h"
#include "ladder/tokenizer/jinja/error.h"
#include "ladder/tokenizer/jinja/json.h"
#include "ladder/tokenizer/jinja/template.h"

namespace ladder::tokenizer::jinja {
namespace {

TEST(JinjaGoldens, every_case_renders_as_jinja2_does) {
    const nlohmann::ordered_json goldens = test::load_goldens("tests/data/jinja_goldens.json");
    std::vector<std::pair<std::string, Value>> variables;
    for (const auto& [name, value] : goldens.at("context").items()) {
        variables.emplace_back(name, from_json(value));
    }
    RenderOptions options;
    options.clock = test::golden_now;
    int n_cases = 0;
    for (const auto& golden : goldens.at("cases")) {
        ++n_cases;
        const std::string source = golden.at("template");
        std::string output;
        std::string error;
        try {
            output = Template(source).render(variables, options);
        } catch (const TemplateError& e) {
            error = e.what();
        }
        if (golden.contains("error")) {
            EXPECT_FALSE(error.empty()) << source << "\n  jinja2 fails (" << golden.at("error")
                                        << ") but ladder rendered: " << output;
        } else {
            EXPECT_EQ(error, "") << source;
            EXPECT_EQ(output, golden.at("output").get<std::string>()) << source;
        }
    }
    EXPECT_GE(n_cases, 150) << "the goldens file holds fewer cases than expected";
}

}  // namespace
}  // namespace ladder::tokenizer::jinja
