// `ladder trace-summary FILE`: where a trace's step time went, as Markdown
// tables to paste into an issue: operations by share of step time, the
// per-layer breakdown and how busy each thread was.
#include <fmt/format.h>

#include <memory>
#include <string>

#include "ladder/cli/commands.h"
#include "ladder/cli/markdown_table.h"
#include "ladder/tools/trace_summary.h"

namespace ladder::cli {

namespace {

std::string ms(double us) { return fmt::format("{:.2f}", us / 1e3); }
std::string percent(double part, double whole) {
    return fmt::format("{:.1f}%", whole > 0.0 ? 100.0 * part / whole : 0.0);
}

void print_operations(const tools::TraceSummary& summary) {
    fmt::print("\n## Operations by share of step time\n\n");
    const std::vector<TableColumn> columns = {
        {"operation", 16, false}, {"kind", 5, false},   {"calls", 7, true},
        {"total ms", 9, true},    {"mean us", 9, true}, {"share of steps", 0, true}};
    fmt::print("{}", markdown_header(columns));
    for (const tools::OperationTime& op : summary.operations) {
        fmt::print("{}", markdown_row(
                             columns,
                             {op.name, op.category, std::to_string(op.n_calls), ms(op.total_us),
                              fmt::format("{:.1f}", op.total_us / static_cast<double>(op.n_calls)),
                              percent(op.total_us, summary.step_us)}));
    }
}

void print_layers(const tools::TraceSummary& summary) {
    if (summary.layers.empty()) return;
    double forward_us = 0.0;
    for (const tools::OperationTime& op : summary.operations) {
        if (op.category == "step" && op.name == "forward") forward_us = op.total_us;
    }
    fmt::print("\n## Per layer (ms)\n\n");
    std::vector<TableColumn> columns = {
        {"layer", 5, true}, {"total", 8, true}, {"share of forward", 0, true}};
    for (const std::string& name : summary.layer_operations) columns.push_back({name, 8, true});
    fmt::print("{}", markdown_header(columns));
    for (const tools::LayerTime& layer : summary.layers) {
        std::vector<std::string> cells = {std::to_string(layer.layer), ms(layer.total_us),
                                          percent(layer.total_us, forward_us)};
        for (const double us : layer.operation_us) cells.push_back(ms(us));
        fmt::print("{}", markdown_row(columns, cells));
    }
}

void print_threads(const tools::TraceSummary& summary) {
    fmt::print("\n## Threads\n\n");
    const std::vector<TableColumn> columns = {{"thread", 14, false},
                                              {"busy ms", 9, true},
                                              {"busy share of steps", 0, true},
                                              {"slices", 7, true},
                                              {"asleep ms", 9, true}};
    fmt::print("{}", markdown_header(columns));
    for (const tools::ThreadTime& thread : summary.threads) {
        fmt::print("{}",
                   markdown_row(columns, {thread.name, ms(thread.busy_us),
                                          percent(thread.busy_us, summary.step_us),
                                          std::to_string(thread.n_slices), ms(thread.sleep_us)}));
    }
    fmt::print(
        "\nA worker's busy time is the tasks it ran; the rest of a step it spins or sleeps. "
        "The engine thread runs its share of every parallel region inside its steps.\n");
}

}  // namespace

void add_trace_summary_command(CLI::App& app) {
    auto path = std::make_shared<std::string>();
    CLI::App* command = app.add_subcommand(
        "trace-summary",
        "summarize a --trace file: top operations by share of step time, per-layer breakdown, "
        "thread utilisation (Markdown tables)");
    command->add_option("file", *path, "a trace written by --trace or POST /start_profile")
        ->required()
        ->check(CLI::ExistingFile);
    command->callback([path] {
        const tools::TraceSummary summary = tools::read_trace_summary(*path);
        fmt::print(
            "trace-summary: {}: {} steps computing {} tokens, {} ms of step time over {} ms; "
            "{} requests\n",
            *path, summary.n_steps, summary.n_step_tokens, ms(summary.step_us), ms(summary.span_us),
            summary.n_requests);
        print_operations(summary);
        print_layers(summary);
        print_threads(summary);
    });
}

}  // namespace ladder::cli
