// What the pipeline needs of the capture layer's record parser, without CUPTI's types:
// completed activity buffers in, gpuspy model events out (libkineto's split between
// CuptiActivityApi and the profiler's policy). ActivityParser implements it; the pipeline gets
// one from the capture layer and never sees a CUPTI header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::inject {

// What a DEVICE record told us; becomes part of the process identity.
struct DeviceInfo {
  uint32_t id = 0;
  std::string name;
  uint32_t sm_count = 0;
  uint64_t global_memory_bytes = 0;
  uint32_t cc_major = 0;
  uint32_t cc_minor = 0;
};

struct ParserStats {
  uint64_t records = 0;
  uint64_t skipped_kinds = 0;      // records of kinds gpuspy does not model (e.g. NAME, STREAM)
  uint64_t unpaired_markers = 0;   // NVTX range ends whose start was never seen
  // GPU records CUPTI could not time (start or end CUPTI_TIMESTAMP_UNKNOWN, "for lack of device
  // memory"): dropped, since a kernel at t=0 would stretch every time range back to 1970.
  uint64_t untimed_records = 0;
  // Buffers whose walk ended on an error, not at their end (a corrupt or unknown record): the
  // rest of such a buffer cannot be read, since record sizes come from kinds.
  uint64_t unreadable_buffers = 0;
};

class RecordParser {
 public:
  virtual ~RecordParser() = default;
  // Appends the events of every record in `buffer[0, valid_bytes)` to `out`.
  virtual void ParseBuffer(uint8_t* buffer, size_t valid_bytes, EventColumns* out) = 0;
  virtual const std::vector<DeviceInfo>& devices() const = 0;
  virtual const ParserStats& stats() const = 0;
};

// Makes the parser for a pipeline, interning names into the pipeline's string table.
using MakeRecordParser = std::function<std::unique_ptr<RecordParser>(StringTable* strings)>;

}  // namespace gpuspy::inject
