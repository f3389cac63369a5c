// Fixed-width Markdown tables for reports people read in a terminal and paste
// into documents, as llama-bench prints its results.
#pragma once

#include <string>
#include <vector>

namespace ladder::cli {

struct TableColumn {
    std::string title;
    int width = 0;  // at least the title's width
    bool right_aligned = false;
};

// "| a | b |" with each cell padded to its column's width.
std::string markdown_row(const std::vector<TableColumn>& columns,
                         const std::vector<std::string>& cells);
// The title row and the alignment row under it ("| ---: |" for right-aligned).
std::string markdown_header(const std::vector<TableColumn>& columns);

}  // namespace ladder::cli
