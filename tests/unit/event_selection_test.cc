// SelectEvents: the window and limit rule GetEvents, the web timeline and the trace export share.
// It replaced expanding every event and filtering the messages; the equivalence test below keeps
// that older form as its oracle, so the answers stay what they were.
#include "model/event_selection.h"

#include <algorithm>
#include <random>
#include <vector>

#include "codec/expanded_events.h"
#include "gtest/gtest.h"
#include "model/string_table.h"

namespace gpuspy {
namespace {

EventColumns TwoCollectives(StringTable* t) {
  EventColumns ev;
  ev.kernels.push_back({1000, 3000, 60047, t->Intern("ncclKernel_AllReduce_RING_LL_Sum_float"),
                        {0, 1, 40}, {}, 0});
  ev.kernels.push_back({500, 700, 19832, t->Intern("ncclKernel_Broadcast_RING_LL_Sum_int8_t"),
                        {0, 1, 40}, {}, 0});
  ev.collectives.push_back({60047, t->Intern("allreduce"), t->Intern("Float"), t->Intern("0"),
                            6637568ull * 4, 6637568ull * 4, 2, -1});
  ev.collectives.push_back({19832, t->Intern("broadcast"), 0, 0, 5ull << 33, 0, 8, 12345});
  return ev;
}

TEST(SelectEvents, AWindowKeepsTheCollectivesOfItsKernelsOnly) {
  StringTable t;
  EventColumns kept;
  // [900, 5000): the allreduce kernel (1000-3000) and its collective, not the broadcast's.
  const Selection s = SelectEvents(TwoCollectives(&t), 900, 5000, 100, &kept);
  EXPECT_EQ(s.events, 2u);
  EXPECT_FALSE(s.truncated);
  ASSERT_EQ(kept.collectives.size(), 1u);
  EXPECT_EQ(t.Get(kept.collectives[0].op), "allreduce");
  ASSERT_EQ(kept.kernels.size(), 1u);
  EXPECT_EQ(kept.kernels[0].correlation_id, 60047u);

  EventColumns none;
  EXPECT_EQ(SelectEvents(TwoCollectives(&t), 4000, 5000, 100, &none).events, 0u);
  EXPECT_TRUE(none.empty());
}

TEST(SelectEvents, NoWindowKeepsEverythingInTimeOrder) {
  StringTable t;
  EventColumns kept;
  const Selection s = SelectEvents(TwoCollectives(&t), 0, 0, 100, &kept);
  EXPECT_EQ(s.events, 4u);
  ASSERT_EQ(kept.kernels.size(), 2u);
  EXPECT_EQ(kept.kernels[0].start_ns, 500);
  EXPECT_EQ(kept.kernels[1].start_ns, 1000);
}

TEST(SelectEvents, TheLimitKeepsTheEarliestAndSaysSo) {
  EventColumns in;
  for (int64_t i = 9; i >= 0; --i) in.kernels.push_back({i * 10, i * 10 + 5, static_cast<uint64_t>(i + 1), 0, {}, {}, 0});
  EventColumns kept;
  const Selection s = SelectEvents(in, 0, 0, 3, &kept);
  EXPECT_TRUE(s.truncated);
  EXPECT_EQ(s.events, 3u);
  ASSERT_EQ(kept.kernels.size(), 3u);
  EXPECT_EQ(kept.kernels[0].start_ns, 0);
  EXPECT_EQ(kept.kernels[2].start_ns, 20);

  EventColumns exact;
  EXPECT_FALSE(SelectEvents(in, 0, 0, 10, &exact).truncated);
}

// The rule as GetEvents applied it before: expand, order by start, filter the messages, cut.
std::vector<v1::Event> Oracle(const EventColumns& in, const StringTable& t, int64_t from_ns,
                              int64_t to_ns, uint64_t limit, bool* truncated) {
  std::vector<v1::Event> all;
  ToExpandedEvents(in, t, &all);
  if (from_ns != 0 || to_ns != 0) {
    auto touches = [&](const v1::Event& e) { return StartOf(e) < to_ns && EndOf(e) >= from_ns; };
    std::vector<uint64_t> launches;
    for (const v1::Event& e : all) {
      if (e.has_kernel() && touches(e)) launches.push_back(e.kernel().correlation_id());
      if (e.has_graph_launch() && touches(e)) launches.push_back(e.graph_launch().correlation_id());
    }
    std::erase_if(all, [&](const v1::Event& e) {
      if (e.has_collective()) {
        return std::find(launches.begin(), launches.end(), e.collective().correlation_id()) ==
               launches.end();
      }
      return !touches(e);
    });
  }
  *truncated = all.size() > limit;
  if (*truncated) all.resize(limit);
  return all;
}

TEST(SelectEvents, AnswersWhatExpandingAndFilteringAnswered) {
  std::mt19937_64 rng(17);
  auto time = [&] { return static_cast<int64_t>(rng() % 2000); };
  for (int round = 0; round < 50; ++round) {
    StringTable t;
    const StringRef names[] = {0, t.Intern("gemm"), t.Intern("nccl"), t.Intern("step")};
    EventColumns in;
    for (int i = 0; i < 200; ++i) {
      const int64_t a = time(), b = a + time() % 300;
      const uint64_t corr = rng() % 64;
      switch (rng() % 9) {
        case 0: in.kernels.push_back({a, b, corr, names[rng() % 4], {0, 1, 7}, {}, 0}); break;
        case 1: in.memcpys.push_back({a, b, corr, {0, 1, 7}, CopyKind::kHtoD}); break;
        case 2: in.syncs.push_back({a, b, corr, {0, 1, 0}, SyncKind::kStream}); break;
        case 3: in.memory.push_back({a, corr, {}, MemoryOpKind::kAlloc}); break;
        case 4: in.apis.push_back({a, b, corr, ApiDomain::kRuntime, 211, names[rng() % 4], 5, 0}); break;
        case 5: in.nvtx_ranges.push_back({a, b, names[3], names[rng() % 4], 5, 0}); break;
        case 6: in.graph_launches.push_back({a, b, corr, {0, 1, 7}, 3}); break;
        case 7: in.external_correlations.push_back({corr, 1, corr * 3}); break;
        default: in.collectives.push_back({corr, names[2], 0, 0, 64, 64, 2, -1}); break;
      }
    }
    const int64_t from_ns = round % 5 == 0 ? 0 : time();
    const int64_t to_ns = round % 5 == 0 ? (round % 10 == 0 ? 0 : 700) : from_ns + time();
    const uint64_t limit = round % 3 == 0 ? 1000 : rng() % 150;
    bool oracle_truncated = false;
    const std::vector<v1::Event> want = Oracle(in, t, from_ns, to_ns, limit, &oracle_truncated);

    EventColumns kept;
    const Selection s = SelectEvents(in, from_ns, to_ns, limit, &kept);
    std::vector<v1::Event> got;
    ToExpandedEvents(kept, t, &got);
    EXPECT_EQ(s.truncated, oracle_truncated) << "round " << round;
    EXPECT_EQ(s.events, want.size()) << "round " << round;
    ASSERT_EQ(got.size(), want.size()) << "round " << round;
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].SerializeAsString(), want[i].SerializeAsString())
          << "round " << round << " event " << i;
    }
  }
}

}  // namespace
}  // namespace gpuspy
