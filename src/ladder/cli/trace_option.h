// --trace FILE, shared by the commands that run the engine (run, generate,
// serve): a Chrome trace-event file of every engine step, layer, kernel pool
// thread and request, which Perfetto UI and chrome://tracing open.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace ladder::cli {

void add_trace_option(CLI::App& command, std::string& path);

}  // namespace ladder::cli
