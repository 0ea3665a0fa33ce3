// A synthetic rank stored through ingest as a producer would send it: Hello, then one batch per
// step numbered 1, 2, ... (the query and analysis-cache tests start from a stored job).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>

#include "codec/batch_encoder.h"
#include "collector/ingest/batch_ingestor.h"
#include "tools/replay/synthetic_workload.h"

namespace gpuspy::testing {

// Every step of `rank` stored; its process id. A batch ingest refuses fails the test.
inline uint64_t StoreRank(collector::BatchIngestor& ingestor, const synthetic::SyntheticRank& rank) {
  const uint64_t process = ingestor.Hello(rank.identity, 1)->process_id();
  BatchEncoder encoder(&rank.strings);
  uint64_t sequence = 0;
  for (const EventColumns& step : rank.steps) {
    v1::EventBatch b;
    encoder.Encode(step, ++sequence, {}, &b);
    EXPECT_TRUE(ingestor.Ingest(process, b).ok()) << "batch " << sequence;
  }
  return process;
}

}  // namespace gpuspy::testing
