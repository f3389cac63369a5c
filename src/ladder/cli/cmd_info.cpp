// `ladder info`: what a GGUF file holds (header, hyperparameters, tokenizer,
// tensors, totals by type), as a table for people or --json for tools. One
// JSON summary is built from the file and the text view is rendered from it.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "ladder/cli/commands.h"
#include "ladder/gguf/gguf_file.h"
#include "ladder/tensor/dtype.h"

namespace ladder::cli {

namespace {

using nlohmann::json;

constexpr size_t kMaxInlineArray = 16;  // longer arrays are summarized in text

json value_to_json(const gguf::Value& value) {
    switch (value.type) {
        case gguf::ValueType::Float32: {
            // Shortest text that reads back as the same float: 1e-05, not
            // 9.999999747378752e-06, which is the same float32 printed as a double.
            const auto f = static_cast<float>(std::get<double>(value.data));
            return std::stod(fmt::format("{}", f));
        }
        case gguf::ValueType::Array: {
            json out = json::array();
            for (const auto& element : value.as_array()->elements) {
                out.push_back(value_to_json(element));
            }
            return out;
        }
        default: break;
    }
    return std::visit(
        [](const auto& v) -> json {
            if constexpr (std::is_same_v<std::decay_t<decltype(v)>, gguf::Array>) {
                return nullptr;  // handled above
            } else {
                return v;
            }
        },
        value.data);
}

json string_or_null(const gguf::GgufFile& file, const std::string& key) {
    const gguf::Value* value = file.find(key);
    const std::string* s = value ? value->as_string() : nullptr;
    return s ? json(*s) : json(nullptr);
}

json int_or_null(const gguf::GgufFile& file, const std::string& key) {
    const gguf::Value* value = file.find(key);
    const auto i = value ? value->as_int() : std::nullopt;
    return i ? json(*i) : json(nullptr);
}

json tokenizer_summary(const gguf::GgufFile& file) {
    const gguf::Value* tokens = file.find("tokenizer.ggml.tokens");
    const gguf::Array* token_array = tokens ? tokens->as_array() : nullptr;
    return {
        {"model", string_or_null(file, "tokenizer.ggml.model")},
        {"pre", string_or_null(file, "tokenizer.ggml.pre")},
        {"vocab_size", token_array ? json(token_array->elements.size()) : json(nullptr)},
        {"bos_token_id", int_or_null(file, "tokenizer.ggml.bos_token_id")},
        {"eos_token_id", int_or_null(file, "tokenizer.ggml.eos_token_id")},
        {"has_chat_template", file.find("tokenizer.chat_template") != nullptr},
    };
}

json tensor_summary(const gguf::GgufFile& file, json& totals) {
    json tensors = json::array();
    json by_type = json::object();
    uint64_t n_parameters = 0;
    uint64_t n_bytes = 0;
    for (const gguf::TensorInfo& info : file.tensors()) {
        const std::string type(tensor::dtype_name(info.dtype));
        tensors.push_back({{"name", info.name},
                           {"type", type},
                           {"shape", info.shape},
                           {"bytes", info.size_bytes},
                           {"offset_bytes", info.offset_bytes}});
        json& entry = by_type[type];
        if (entry.is_null()) entry = {{"n_tensors", 0}, {"n_parameters", 0}, {"bytes", 0}};
        entry["n_tensors"] = entry["n_tensors"].get<uint64_t>() + 1;
        entry["n_parameters"] =
            entry["n_parameters"].get<uint64_t>() + static_cast<uint64_t>(info.n_elements);
        entry["bytes"] = entry["bytes"].get<uint64_t>() + info.size_bytes;
        n_parameters += static_cast<uint64_t>(info.n_elements);
        n_bytes += info.size_bytes;
    }
    totals = {{"n_tensors", file.tensors().size()},
              {"n_parameters", n_parameters},
              {"bytes", n_bytes},
              {"by_type", by_type}};
    return tensors;
}

json build_summary(const gguf::GgufFile& file, const std::string& path, uint64_t file_bytes) {
    json summary;
    summary["file"] = path;
    summary["file_bytes"] = file_bytes;
    summary["gguf_version"] = file.version();
    summary["alignment"] = file.alignment();
    summary["data_offset_bytes"] = file.data_offset_bytes();
    summary["n_metadata"] = file.metadata().size();
    const json architecture = string_or_null(file, "general.architecture");
    summary["architecture"] = architecture;
    summary["name"] = string_or_null(file, "general.name");
    // Every <arch>.* key, whatever the architecture: no per-arch list here.
    json hyperparameters = json::object();
    if (architecture.is_string()) {
        const std::string prefix = architecture.get<std::string>() + ".";
        for (const auto& [key, value] : file.metadata()) {
            if (key.starts_with(prefix)) hyperparameters[key] = value_to_json(value);
        }
    }
    summary["hyperparameters"] = hyperparameters;
    summary["tokenizer"] = tokenizer_summary(file);
    json totals;
    summary["tensors"] = tensor_summary(file, totals);
    summary["totals"] = totals;
    return summary;
}

std::string human_bytes(uint64_t n_bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double size = static_cast<double>(n_bytes);
    size_t unit = 0;
    while (size >= 1024.0 && unit + 1 < std::size(units)) {
        size /= 1024.0;
        ++unit;
    }
    return unit == 0 ? fmt::format("{} B", n_bytes) : fmt::format("{:.1f} {}", size, units[unit]);
}

std::string human_count(uint64_t n) {
    if (n >= 1'000'000'000) return fmt::format("{:.2f}B", static_cast<double>(n) / 1e9);
    if (n >= 1'000'000) return fmt::format("{:.1f}M", static_cast<double>(n) / 1e6);
    if (n >= 1'000) return fmt::format("{:.1f}K", static_cast<double>(n) / 1e3);
    return std::to_string(n);
}

// Strings from the file need not be valid UTF-8; replace bad bytes rather
// than let the JSON library throw.
std::string dump(const json& value, int indent = -1) {
    return value.dump(indent, ' ', false, json::error_handler_t::replace);
}

std::string text_of(const json& value) {
    if (value.is_null()) return "-";
    if (value.is_string()) return value.get<std::string>();
    if (value.is_boolean()) return value.get<bool>() ? "yes" : "no";
    if (value.is_array() && value.size() > kMaxInlineArray) {
        return fmt::format("[{} values]", value.size());
    }
    return dump(value);
}

std::string shape_text(const json& shape) {
    std::string out;
    for (const auto& dim : shape) out += (out.empty() ? "" : " x ") + dim.dump();
    return out;
}

void print_text(const json& s) {
    fmt::print("file          {} ({})\n", s["file"].get<std::string>(),
               human_bytes(s["file_bytes"].get<uint64_t>()));
    fmt::print("gguf          version {}, {} metadata keys, alignment {}, data at byte {}\n",
               s["gguf_version"].dump(), s["n_metadata"].dump(), s["alignment"].dump(),
               s["data_offset_bytes"].dump());
    fmt::print("architecture  {}\n", text_of(s["architecture"]));
    fmt::print("name          {}\n", text_of(s["name"]));

    fmt::print("\nhyperparameters\n");
    size_t key_width = 0;
    for (const auto& [key, value] : s["hyperparameters"].items()) {
        key_width = std::max(key_width, key.size());
    }
    for (const auto& [key, value] : s["hyperparameters"].items()) {
        fmt::print("  {:<{}}  {}\n", key, key_width, text_of(value));
    }

    const json& tok = s["tokenizer"];
    fmt::print("\ntokenizer\n");
    fmt::print("  model          {}\n", text_of(tok["model"]));
    fmt::print("  pre            {}\n", text_of(tok["pre"]));
    fmt::print("  vocab size     {}\n", text_of(tok["vocab_size"]));
    fmt::print("  bos / eos      {} / {}\n", text_of(tok["bos_token_id"]),
               text_of(tok["eos_token_id"]));
    fmt::print("  chat template  {}\n", text_of(tok["has_chat_template"]));

    const json& tensors = s["tensors"];
    size_t name_width = 4;
    size_t shape_width = 5;
    for (const auto& t : tensors) {
        name_width = std::max(name_width, t["name"].get<std::string>().size());
        shape_width = std::max(shape_width, shape_text(t["shape"]).size());
    }
    fmt::print("\ntensors ({})\n", tensors.size());
    fmt::print("  {:<{}}  {:<5}  {:<{}}  {:>12}\n", "name", name_width, "type", "shape",
               shape_width, "bytes");
    for (const auto& t : tensors) {
        fmt::print("  {:<{}}  {:<5}  {:<{}}  {:>12}\n", t["name"].get<std::string>(), name_width,
                   t["type"].get<std::string>(), shape_text(t["shape"]), shape_width,
                   t["bytes"].get<uint64_t>());
    }

    const json& totals = s["totals"];
    fmt::print("\ntotals by type\n");
    fmt::print("  {:<5}  {:>7}  {:>12}  {:>12}\n", "type", "tensors", "parameters", "bytes");
    for (const auto& [type, entry] : totals["by_type"].items()) {
        fmt::print("  {:<5}  {:>7}  {:>12}  {:>12}\n", type, entry["n_tensors"].dump(),
                   entry["n_parameters"].dump(), entry["bytes"].dump());
    }
    const auto n_parameters = totals["n_parameters"].get<uint64_t>();
    const auto n_bytes = totals["bytes"].get<uint64_t>();
    fmt::print("  {:<5}  {:>7}  {:>12}  {:>12}  ({} parameters, {}, {:.2f} bits per parameter)\n",
               "all", totals["n_tensors"].dump(), n_parameters, n_bytes, human_count(n_parameters),
               human_bytes(n_bytes),
               n_parameters == 0 ? 0.0 : 8.0 * static_cast<double>(n_bytes) / n_parameters);
}

struct InfoOptions {
    std::string model;
    bool json = false;
};

void run_info(const InfoOptions& options) {
    const std::string path = resolve_model_path(options.model);
    const auto file = gguf::GgufFile::open(path);
    const json summary = build_summary(*file, path, std::filesystem::file_size(path));
    if (options.json) {
        fmt::print("{}\n", dump(summary, 2));
    } else {
        print_text(summary);
    }
}

}  // namespace

void add_info_command(CLI::App& app) {
    auto options = std::make_shared<InfoOptions>();
    CLI::App* command = app.add_subcommand(
        "info", "Show a GGUF model's metadata, hyperparameters, tokenizer and tensors");
    add_model_option(*command, options->model);
    command->add_flag("--json", options->json, "Machine-readable JSON output");
    command->callback([options] { run_info(*options); });
}

}  // namespace ladder::cli
