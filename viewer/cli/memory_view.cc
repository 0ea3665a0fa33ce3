#include "viewer/cli/memory_view.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "model/units.h"

namespace gpuspy::cli {
namespace {

std::string Bytes(int64_t bytes) { return FormatBytes(static_cast<uint64_t>(bytes < 0 ? 0 : bytes)); }

std::string SignedBytes(int64_t bytes) {
  return bytes < 0 ? absl::StrCat("-", Bytes(-bytes)) : absl::StrCat("+", Bytes(bytes));
}

}  // namespace

std::string MemoryLine(const v1::StepMemory& m) {
  std::string line = absl::StrCat("device memory (", m.source(), "): ", Bytes(m.reserved_end_bytes()),
                                  " reserved (", SignedBytes(m.reserved_growth_bytes()), " in the step)");
  if (m.has_allocated()) {
    absl::StrAppend(&line, ", ", Bytes(m.allocated_end_bytes()), " allocated (",
                    SignedBytes(m.allocated_growth_bytes()), ")");
  }
  absl::StrAppend(&line, ", peak ", Bytes(m.reserved_peak_bytes()), " reserved");
  if (m.has_allocated()) absl::StrAppend(&line, " / ", Bytes(m.allocated_peak_bytes()), " allocated");
  return line;
}

}  // namespace gpuspy::cli
