// One number for everything a Kineto read produced: every event column through the wire
// encoding (strings resolved, in interning order), the identity and the per-category counts.
#pragma once

#include <cstdint>
#include <string>

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

inline uint64_t Digest(const KinetoTrace& t) {
  BatchEncoder encoder(&t.strings);
  v1::EventBatch batch;
  encoder.Encode(t.events, 1, LossCounters{}, &batch);
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
