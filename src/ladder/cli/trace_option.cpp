#include "ladder/cli/trace_option.h"

namespace ladder::cli {

void add_trace_option(CLI::App& command, std::string& path) {
    command.add_option("--trace", path,
                       "write a Chrome trace-event JSON of every engine step (schedule, forward "
                       "by layer and operation, sampling, outputs), each kernel thread and each "
                       "request to FILE; open it in https://ui.perfetto.dev or summarize it with "
                       "`ladder trace-summary`");
}

}  // namespace ladder::cli
