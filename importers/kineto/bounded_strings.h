// The importer's limit on one string: gpuspyd refuses a dictionary string over 64 KiB
// (collector/ingest/batch_ingestor.h, kMaxDictionaryStringBytes), so a trace with a longer name
// (a kernel name of megabytes, a hostile file) would be read, then refused at import, or sent as
// one message too large to serialize (a 2 GiB name aborted `gpuspy import` in gRPC's serializer,
// issue 34). Longer strings are cut to the limit, end with a marker, and are counted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "model/string_table.h"

namespace gpuspy::importers {

// The same value as the collector's kMaxDictionaryStringBytes (a test checks they agree).
inline constexpr size_t kMaxStringBytes = 64 * 1024;
// What a cut string ends with (within kMaxStringBytes).
inline constexpr std::string_view kCutMarker = "...[cut: longer than 64 KiB]";

// `value` when it fits in kMaxStringBytes; else its start (cut at a UTF-8 character boundary:
// protobuf strings must stay valid UTF-8) plus kCutMarker, built in `*scratch`.
std::string_view CutToLimit(std::string_view value, std::string* scratch);

// Interns into a StringTable, cutting what is too long and counting the cuts.
class BoundedInterner {
 public:
  explicit BoundedInterner(StringTable* strings) : strings_(strings) {}
  StringRef Intern(std::string_view value);
  uint64_t cut() const { return cut_; }

 private:
  StringTable* strings_;
  std::string scratch_;
  uint64_t cut_ = 0;
};

}  // namespace gpuspy::importers
