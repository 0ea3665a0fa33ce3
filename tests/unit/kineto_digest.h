// One number for everything a Kineto read produced: every event column through the wire
// encoding (strings resolved, in interning order), the identity and the per-category counts.
#pragma once

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "codec/batch_encoder.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "importers/kineto/kineto_reader.h"

namespace gpuspy::importers {

inline uint64_t Fnv1a(const std::string& bytes, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// The strings of `t` less those only its thread names and its op work's types brought (interned
// last, when the read finishes): both are newer than the recorded digests, which cover the events.
inline void EventStrings(const KinetoTrace& t, StringTable* out) {
  absl::flat_hash_set<StringRef> names;
  for (const auto& [tid, ref] : t.thread_names) names.insert(ref);
  for (const OpWorkEvent& w : t.events.op_works) names.insert(w.dtype);
  size_t n = t.strings.size();
  while (n > 0 && names.contains(t.strings.Entry(n - 1).first)) --n;
  for (size_t i = 0; i < n; ++i) {
    const auto [ref, value] = t.strings.Entry(i);
    (void)out->Define(ref, value);  // refs are unique in `t`: cannot conflict
  }
}

inline uint64_t Digest(const KinetoTrace& t) {
  StringTable strings;  // holds the encoder's strings: declared first, destroyed last
  EventStrings(t, &strings);
  BatchEncoder encoder(&strings);
  v1::EventBatch batch;
  // Op work is newer than the recorded digests too (its own test: tests/unit/hardware).
  EventColumns events = t.events;
  events.op_works.clear();
  encoder.Encode(events, 1, LossCounters{}, &batch);
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream out(&bytes);
    google::protobuf::io::CodedOutputStream coded(&out);
    coded.SetSerializationDeterministic(true);
    batch.SerializeToCodedStream(&coded);
    t.identity.SerializeToCodedStream(&coded);
  }
  std::string stats = absl::StrCat(t.stats.trace_events, ";", t.stats.collectives, ";");
  for (const auto& [k, n] : t.stats.imported) absl::StrAppend(&stats, "+", k, "=", n, ";");
  for (const auto& [k, n] : t.stats.skipped) absl::StrAppend(&stats, "-", k, "=", n, ";");
  return Fnv1a(stats, Fnv1a(bytes));
}

}  // namespace gpuspy::importers
