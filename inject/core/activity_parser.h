// CUPTI activity records -> gpuspy model events. Runs on the sender thread, never in CUPTI's
// callbacks. One of the three files that know CUPTI's types (with cupti_api and cupti_capture).
#pragma once

#include <cupti.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "inject/core/cupti_api.h"
#include "inject/core/record_parser.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::inject {

// NVTX range starts waiting for their end record; beyond this the oldest are dropped (a range
// that never ends is an application bug, not a reason to grow without bound).
inline constexpr size_t kMaxOpenNvtxRanges = 4096;

class ActivityParser : public RecordParser {
 public:
  // `strings` is the process's string table; names are interned into it.
  ActivityParser(const CuptiApi* api, StringTable* strings) : api_(api), strings_(strings) {}

  // Appends the events of every record in `buffer[0, valid_bytes)` to `out`.
  void ParseBuffer(uint8_t* buffer, size_t valid_bytes, EventColumns* out) override;
  // One record (exposed for tests that build records by hand).
  void ParseRecord(const CUpti_Activity* record, EventColumns* out);

  const std::vector<DeviceInfo>& devices() const override { return devices_; }
  const ParserStats& stats() const override { return stats_; }

 private:
  struct OpenRange {
    int64_t start_ns;
    StringRef domain;
    StringRef message;
    uint32_t thread_id;
    uint32_t depth;
    uint64_t order;
  };

  StringRef ApiName(CUpti_CallbackDomain domain, uint32_t cbid);
  uint32_t DeviceOfContext(uint32_t context_id) const;
  void OnMarker(const CUpti_ActivityMarker2& m, EventColumns* out);

  const CuptiApi* api_;
  StringTable* strings_;
  ParserStats stats_;
  std::vector<DeviceInfo> devices_;
  absl::flat_hash_map<uint64_t, StringRef> api_names_;         // (domain << 32 | cbid) -> name
  absl::flat_hash_map<uint32_t, uint32_t> context_device_;     // CONTEXT records
  absl::flat_hash_map<uint32_t, OpenRange> open_ranges_;       // marker id -> start
  absl::flat_hash_map<uint32_t, uint32_t> thread_depth_;       // open ranges per thread
  uint64_t range_order_ = 0;
};

}  // namespace gpuspy::inject
