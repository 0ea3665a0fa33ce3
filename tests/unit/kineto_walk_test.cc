// KinetoWalk: the trace's grammar over JsonTokens, on the shapes real and hand-written traces
// take that the mapping must read past or read right: entries that are no objects, containers
// where scalars were expected, counts that are no counts, a base time written as a string.
#include <gtest/gtest.h>

#include <string>

#include "importers/kineto/kineto_reader.h"

namespace gpuspy::importers {
namespace {

constexpr const char* kOddTrace = R"json({
  "deviceProperties": [7, {"id": 1, "name": "H100", "numSms": 132, "extra": {"a": [1]}}],
  "distributedInfo": {"rank": "x", "world_size": 4, "backend": "nccl", "nested": {"rank": 9}},
  "gpuspyNotExported": {"a": 3, "b": "4", "c": 1.5, "d": -1, "e": 012, "f": 18446744073709551615,
                        "g": {"n": 2}},
  "traceEvents": [1, "s", null, [2],
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 1, "tid": 2, "ts": 10, "dur": 5, "id": {"q": [1, {}]},
     "args": {"correlation": 1, "grid": {"x": 4, "y": 2, "z": 1}, "block": [128, [1], 1], "stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "k2", "pid": 1, "tid": 2, "ts": 30, "dur": 5,
     "args": {"correlation": 2, "grid": 9, "block": [32, 1, 1], "registers per thread": true}}],
  "baseTimeNanoseconds": "1000"
})json";

TEST(KinetoWalk, ReadsPastWhatIsNoFieldOfItsAndReadsTheRestRight) {
  auto t = ParseKinetoTrace(kOddTrace);
  ASSERT_TRUE(t.ok()) << t.status();
  // Only objects are events; the four other entries are skipped uncounted.
  EXPECT_EQ(t->stats.trace_events, 2u);
  // A device list entry that is no object is no device.
  ASSERT_EQ(t->identity.devices_size(), 1);
  EXPECT_EQ(t->identity.devices(0).id(), 1u);
  EXPECT_EQ(t->identity.devices(0).name(), "H100");
  EXPECT_EQ(t->identity.devices(0).sm_count(), 132u);
  // A rank that is no integer says nothing; the world size does.
  EXPECT_EQ(t->identity.rank(), -1);
  EXPECT_EQ(t->identity.world_size(), 4);
  // Counts are JSON's unsigned integers only: no strings, fractions, signs or leading zeros.
  EXPECT_EQ(t->stats.not_exported, (std::map<std::string, uint64_t>{{"a", 3}, {"f", 18446744073709551615ull}}));
  ASSERT_EQ(t->events.kernels.size(), 2u);
  const KernelEvent& k = t->events.kernels[0];
  // ts is µs from baseTimeNanoseconds, which a string states as well as a number.
  EXPECT_EQ(k.start_ns, 10'000 + 1000);
  EXPECT_EQ(k.stream.stream_id, 7u);
  // grid as an object reads its values; block's nested array is no integer: two of three, unset.
  EXPECT_EQ(k.shape.grid_x, 4u);
  EXPECT_EQ(k.shape.grid_y, 2u);
  EXPECT_EQ(k.shape.grid_z, 1u);
  EXPECT_EQ(k.shape.block_x, 0u);
  // A grid that is a number is an arg like any other, not a shape; true is no register count.
  const KernelEvent& k2 = t->events.kernels[1];
  EXPECT_EQ(k2.shape.grid_x, 0u);
  EXPECT_EQ(k2.shape.block_x, 32u);
  EXPECT_EQ(k2.shape.registers_per_thread, 0u);
}

TEST(KinetoWalk, AnEntryCutShortIsAnErrorAtTheEnd) {
  const std::string json = R"({"traceEvents": [{"ph": "X", "args": {"grid": [1, 2)";
  auto t = ParseKinetoTrace(json);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("at byte " + std::to_string(json.size())), std::string::npos)
      << t.status();
}

}  // namespace
}  // namespace gpuspy::importers
