// Kineto trace events -> gpuspy's event columns: which category becomes which model event, and
// the whole-trace fix-ups (base time, time order, Python call sites, the profiled pid). The JSON
// walk (kineto_reader.cc) hands over one RawEvent at a time; nothing here knows about JSON.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "importers/kineto/bounded_strings.h"
#include "importers/kineto/kineto_reader.h"
#include "importers/kineto/literal_match.h"

namespace gpuspy::importers {

// One trace event: only what the mapping needs, scalars as the JSON text of their value
// (strings unescaped, numbers as written, true/false, null as ""). The views point into the
// parsed document and live as long as it does.
struct RawEvent {
  std::string_view ph, cat, name, ts, dur, pid, tid;
  std::vector<std::pair<std::string_view, std::string_view>> args;  // in document order
  std::vector<int64_t> grid, block;
  // A work op's "Input Dims" and "Input type" (record_shapes=True), read only for ops whose work
  // the mapping computes (op_work.h): every input's dims one after the other, input i's ending
  // at input_dim_ends[i].
  std::vector<int64_t> input_dims;
  std::vector<uint32_t> input_dim_ends;
  std::vector<std::string_view> input_types;

  void Clear() {
    ph = cat = name = ts = dur = pid = tid = {};
    args.clear();
    grid.clear();
    block.clear();
    input_dims.clear();
    input_dim_ends.clear();
    input_types.clear();
  }
  // A repeated key's last value, as when the object is read into a map.
  const std::string_view* FindArg(std::string_view key) const {
    return LastArgWhere([&](std::string_view k) { return k == key; });
  }
  // The same for a literal key (the mapping's), compared inline (literal_match.h).
  template <size_t N>
  const std::string_view* FindArg(const char (&key)[N]) const {
    return LastArgWhere([&](std::string_view k) { return Matches(k, key); });
  }
  template <size_t N>
  std::string_view Arg(const char (&key)[N]) const {
    const std::string_view* v = FindArg(key);
    return v == nullptr ? std::string_view() : *v;
  }

 private:
  template <typename KeyIs>
  const std::string_view* LastArgWhere(KeyIs key_is) const {
    for (auto it = args.rbegin(); it != args.rend(); ++it) {
      if (key_is(it->first)) return &it->second;
    }
    return nullptr;
  }
};

// Integer text, or a double that is a whole number in int64 range ("7.0"). `*out` changes only
// on success.
bool ToInt(std::string_view s, int64_t* out);
bool MicrosToNanos(std::string_view text, int64_t* ns);

class KinetoMapper {
 public:
  static constexpr size_t kKnownCategoryCount = 11;  // the categories imported (kineto_mapping.cc)

  explicit KinetoMapper(KinetoTrace* out) : out_(out), names_(&out->strings) {}

  // One entry of traceEvents.
  void Map(const RawEvent& e);
  // The top-level baseTimeNanoseconds: newer Kineto (and gpuspy's export) write ts relative to it.
  void SetBase(std::string_view text);
  // After the last event: shifts, orders, attaches call sites, picks the pid, fills the stats.
  void Finish();

 private:
  void Skip(std::string_view why);
  void MapMemorySample(const RawEvent& e);
  // A cpu_op's work figures (op_work.h), as an OpWorkEvent over its range, when it has any.
  void MapOpWork(const RawEvent& e, int64_t start, int64_t end, uint32_t tid);
  // A "thread_name" metadata event ("ph": "M"): the name of a host thread, for the timeline.
  void KeepThreadName(const RawEvent& e);
  // A CUDA call's pid, for the profiled process (Finish).
  void VoteForPid(std::string_view pid);
  void EndPidRun();

  KinetoTrace* out_;
  BoundedInterner names_;  // every string the mapping keeps goes through it
  // Older traces (with_stack=True before python_function events) carry a cpu_op's Python stack as
  // its "Call stack" arg: its innermost user frame, as a frame range around the op, for call sites.
  std::vector<NvtxRangeEvent> stack_frames_;
  // Counted by view while the document lives; folded into the stats' std::maps by Finish.
  absl::flat_hash_map<std::string, uint64_t> imported_, skipped_;
  // Counts that would otherwise hash a string per event: imported events by known category (when
  // the trace writes its name as kKnownCategories does), skipped ones by one-letter phase.
  std::array<uint64_t, kKnownCategoryCount> imported_known_{};
  std::array<uint64_t, 128> skipped_phases_{};
  // A host range's domain ref per known category, 0 until its first range.
  std::array<StringRef, kKnownCategoryCount> domain_refs_{};
  absl::flat_hash_map<std::string, uint64_t> pid_votes_;
  std::string pid_run_;  // the pid of the current run of votes, pid_run_votes_ long
  uint64_t pid_run_votes_ = 0;
  // Op work's type names in first-seen order, interned by Finish; an op work's dtype holds its
  // index + 1 until then.
  std::vector<std::string> op_dtypes_;
  absl::flat_hash_map<std::string, size_t> op_dtype_index_;
  // pid text -> tid -> name; only the profiled pid's are kept (Finish).
  static constexpr size_t kMaxThreadNames = 4096;
  absl::flat_hash_map<std::string, absl::flat_hash_map<uint32_t, std::string>> thread_names_;
  int64_t base_ns_ = 0;
};

}  // namespace gpuspy::importers
