// A column-aligned text table: header, rows, right-aligned numeric columns.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace gpuspy::cli {

class Table {
 public:
  // A header starting with '>' is right-aligned (the '>' is not printed).
  explicit Table(std::vector<std::string> header);
  void Add(std::vector<std::string> row);
  void Print(std::ostream& out) const;
  bool empty() const { return rows_.empty(); }

 private:
  std::vector<std::string> header_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace gpuspy::cli
