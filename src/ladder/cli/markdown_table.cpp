#include "ladder/cli/markdown_table.h"

#include <fmt/format.h>

#include <algorithm>

#include "ladder/util/check.h"

namespace ladder::cli {

std::string markdown_row(const std::vector<TableColumn>& columns,
                         const std::vector<std::string>& cells) {
    LADDER_CHECK(cells.size() == columns.size(), "a table row needs one cell per column");
    std::string row = "|";
    for (size_t i = 0; i < cells.size(); ++i) {
        const int width =
            std::max<int>(columns[i].width, static_cast<int>(columns[i].title.size()));
        row += columns[i].right_aligned ? fmt::format(" {:>{}} |", cells[i], width)
                                        : fmt::format(" {:<{}} |", cells[i], width);
    }
    return row + "\n";
}

std::string markdown_header(const std::vector<TableColumn>& columns) {
    std::vector<std::string> titles;
    std::vector<std::string> rules;
    for (const TableColumn& column : columns) {
        titles.push_back(column.title);
        const int width = std::max<int>(column.width, static_cast<int>(column.title.size()));
        rules.push_back(column.right_aligned
                            ? std::string(static_cast<size_t>(width - 1), '-') + ":"
                            : std::string(static_cast<size_t>(width), '-'));
    }
    return markdown_row(columns, titles) + markdown_row(columns, rules);
}

}  // namespace ladder::cli
