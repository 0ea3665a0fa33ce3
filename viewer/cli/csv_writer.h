// CSV for `--csv` (RFC 4180): a field is quoted when it holds a comma, a double quote, a line
// break or leading/trailing space, and a quote inside is doubled. No CSV library is installed;
// kernel names ("void at::native::(anonymous namespace)::foo<float, 4>") and fix hints hold
// commas and quotes, so every field goes through this one rule.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace gpuspy::cli {

// One field as written in a CSV row.
std::string CsvField(std::string_view value);

// One row: the fields, comma-separated, ended by "\r\n" as RFC 4180 says (every spreadsheet and
// Python's csv module read it; a bare "\n" inside a quoted field stays as it is).
void WriteCsvRow(std::ostream& out, const std::vector<std::string>& fields);

}  // namespace gpuspy::cli
