// xgrammar's logging, routed through ladder (xgrammar is built with
// XGRAMMAR_LOG_CUSTOMIZE). Its errors stay exceptions; its warnings, which it
// gives where it would ignore part of a schema, are collected by the thread
// that asked, so that the request can be refused instead.
#pragma once

#include <exception>
#include <string>
#include <vector>

namespace ladder::engine {

// While alive, collects the warnings xgrammar gives on this thread.
class XgrammarWarnings {
public:
    XgrammarWarnings();
    ~XgrammarWarnings();
    XgrammarWarnings(const XgrammarWarnings&) = delete;
    XgrammarWarnings& operator=(const XgrammarWarnings&) = delete;

    const std::vector<std::string>& messages() const { return messages_; }

private:
    std::vector<std::string> messages_;
    std::vector<std::string>* previous_;
};

// The message of an exception thrown by xgrammar, without the time stamp and
// source location its own errors carry.
std::string xgrammar_error_message(const std::exception& error);

}  // namespace ladder::engine
