#include "ladder/engine/xgrammar_log.h"

#include <cstdio>

// xgrammar's internal logging header (cmake/xgrammar.cmake adds its folder
// for this file alone): LogFatalError, and the hooks declared for customized
// logging.
#include "support/logging.h"

namespace ladder::engine {

namespace {

thread_local std::vector<std::string>* current_warnings = nullptr;

}  // namespace

XgrammarWarnings::XgrammarWarnings() : previous_(current_warnings) {
    current_warnings = &messages_;
}

XgrammarWarnings::~XgrammarWarnings() { current_warnings = previous_; }

std::string xgrammar_error_message(const std::exception& error) {
    if (const auto* fatal = dynamic_cast<const xgrammar::LogFatalError*>(&error)) {
        // The bare message, as given to the runtime_error base.
        return fatal->std::runtime_error::what();
    }
    return error.what();
}

}  // namespace ladder::engine

namespace xgrammar {

void LogFatalImpl(const std::string& file, int lineno, const std::string& message) {
    throw LogFatalError(file, lineno, message);
}

void LogMessageImpl(const std::string& /*file*/, int /*lineno*/, int level,
                    const std::string& message) {
    if (level < XGRAMMAR_LOG_LEVEL_WARNING) return;
    if (ladder::engine::current_warnings != nullptr) {
        ladder::engine::current_warnings->push_back(message);
        return;
    }
    std::fprintf(stderr, "ladder: xgrammar: %s\n", message.c_str());
}

}  // namespace xgrammar
