#include "viewer/cli/table.h"

#include <algorithm>

namespace gpuspy::cli {

Table::Table(std::vector<std::string> header) {
  for (std::string& h : header) {
    const bool right = !h.empty() && h[0] == '>';
    right_.push_back(right);
    header_.push_back(right ? h.substr(1) : h);
  }
}

void Table::Add(std::vector<std::string> row) {
  row.resize(header_.size());
  rows_.push_back(std::move(row));
}

void Table::Print(std::ostream& out) const {
  std::vector<size_t> width(header_.size());
  for (size_t c = 0; c < header_.size(); ++c) {
    width[c] = header_[c].size();
    for (const auto& r : rows_) width[c] = std::max(width[c], r[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(width[c] - cells[c].size(), ' ');
      s += right_[c] ? pad + cells[c] : cells[c] + (c + 1 < cells.size() ? pad : "");
      if (c + 1 < cells.size()) s += "  ";
    }
    out << s << "\n";
  };
  line(header_);
  for (const auto& r : rows_) line(r);
}

}  // namespace gpuspy::cli
