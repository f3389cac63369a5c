// The `ladder` binary: registers the subcommands and turns any error from
// outside input into one line on stderr and a non-zero exit.
#include <cstdio>
#include <exception>

#include "ladder/cli/commands.h"
#include "ladder/util/error.h"

int main(int argc, char** argv) {
    CLI::App app{"ladder: LLM inference engine and server"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "ladder 0.1.0");
    // Flag errors are one line, like every other input error.
    app.failure_message(CLI::FailureMessage::simple);
    ladder::cli::add_info_command(app);
    ladder::cli::add_tokenize_command(app);
    ladder::cli::add_run_command(app);
    ladder::cli::add_chat_command(app);
    ladder::cli::add_perplexity_command(app);
    ladder::cli::add_logprobs_command(app);
    ladder::cli::add_fit_command(app);
    ladder::cli::add_cost_command(app);
    ladder::cli::add_generate_command(app);
    ladder::cli::add_bench_command(app);
    ladder::cli::add_bench_model_command(app);
    ladder::cli::add_roofline_command(app);
    ladder::cli::add_serve_command(app);
    ladder::cli::add_quantize_command(app);
    ladder::cli::add_trace_summary_command(app);
    ladder::cli::add_simulate_command(app);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        // --help and --version arrive as "errors" that exit 0; a bad flag is
        // one line and status 1, like every other input error (CLI11's own
        // message adds a second line and exits 105).
        if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
            return app.exit(error);
        }
        std::fprintf(stderr, "ladder: error: %s\n", error.what());
        return 1;
    } catch (const ladder::util::InputError& error) {
        std::fprintf(stderr, "ladder: error: %s\n", error.what());
        return 1;
    } catch (const std::exception& error) {
        std::fprintf(stderr, "ladder: error: %s\n", error.what());
        return 1;
    }
    return 0;
}
