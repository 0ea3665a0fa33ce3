// Windowed event reads over a real (embedded) store: what the stored batches of a window give
// back. Collectives carry no time: a window must still return those of its kernels, and only those.
#include <gtest/gtest.h>

#include <shared_mutex>
#include <vector>

#include "codec/batch_encoder.h"
#include "collector/ingest/batch_ingestor.h"
#include "collector/query/event_reader.h"
#include "collector/query/query_engine.h"
#include "tests/support/query_engine_parts.h"
#include "tests/support/subprocess.h"

namespace gpuspy::collector {
namespace {

constexpr int64_t kStepNs = 1'000'000;
constexpr int kSteps = 3;

// Per step: a compute kernel, then an NCCL kernel; steps 1 and 2's NCCL kernels have their
// collective (step 0's producer did not say). Cut into one batch per step the way `gpuspy
// import` cuts a trace (Split): spread by index, the 2 collectives would land in the batches of
// steps 0 and 1.
class CollectiveWindowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BatchIngestor ingestor(parts_.store.get(), parts_.dictionaries.get(), &parts_.counters,
                           analysis::StepSegmenter());
    v1::ProcessIdentity id;
    id.set_process_key("test:ddp:0");
    id.set_job_id("ddp");
    id.set_rank(0);
    process_ = ingestor.Hello(id, 1)->process_id();
    StringTable strings;
    EventColumns ev;
    const StringRef gemm = strings.Intern("ampere_sgemm_128x64_tn");
    const StringRef nccl = strings.Intern("ncclKernel_AllReduce_RING_LL_Sum_float");
    for (int s = 0; s < kSteps; ++s) {
      const int64_t t = s * kStepNs;
      const uint64_t corr = 100 + 2 * static_cast<uint64_t>(s);
      ev.kernels.push_back({t + 100'000, t + 300'000, corr, gemm, {0, 1, 7}, {}, 0});
      ev.kernels.push_back({t + 400'000, t + 600'000, corr + 1, nccl, {0, 1, 40}, {}, 0});
      if (s > 0) {
        ev.collectives.push_back({corr + 1, strings.Intern("allreduce"), strings.Intern("Float"),
                                  strings.Intern("0"), 1000u * static_cast<uint64_t>(s),
                                  1000u * static_cast<uint64_t>(s), 2, s});
      }
    }
    BatchEncoder encoder(&strings);
    uint64_t sequence = 0;
    for (const EventColumns& part : ev.Split(kSteps)) {
      v1::EventBatch b;
      encoder.Encode(part, ++sequence, {}, &b);
      ASSERT_TRUE(ingestor.Ingest(process_, b).ok());
    }
    ASSERT_EQ(sequence, static_cast<uint64_t>(kSteps));
  }

  testing::TempDir dir_;
  testing::QueryEngineParts parts_{dir_.path()};
  uint64_t process_ = 0;
};

TEST_F(CollectiveWindowTest, AStepWindowReadHoldsTheCollectivesOfItsKernels) {
  EventReader reader(parts_.store.get(), parts_.dictionaries.get());
  for (int s = 0; s < kSteps; ++s) {
    absl::StatusOr<WindowEvents> w = reader.Read(process_, s * kStepNs, (s + 1) * kStepNs);
    ASSERT_TRUE(w.ok()) << w.status();
    ASSERT_EQ(w->events.kernels.size(), 2u) << "step " << s;
    if (s == 0) {
      EXPECT_TRUE(w->events.collectives.empty());
      continue;
    }
    ASSERT_EQ(w->events.collectives.size(), 1u) << "step " << s;
    const CollectiveEvent& c = w->events.collectives[0];
    EXPECT_EQ(c.correlation_id, w->events.kernels[1].correlation_id);
    EXPECT_EQ(c.in_bytes, 1000u * static_cast<uint64_t>(s));
    EXPECT_EQ(c.sequence, s);
    std::shared_lock lock(w->dictionary->mu);
    EXPECT_EQ(w->dictionary->dict.strings().Get(c.op), "allreduce");
  }
}

TEST_F(CollectiveWindowTest, GetEventsKeepsAWindowsCollectivesAndNoOthers) {
  auto engine = parts_.Engine();
  v1::GetEventsRequest req;
  req.set_job_id("ddp");
  // Step 1, and step 2 up to its compute kernel: step 2's batch is read, and its collective
  // must not come back without its NCCL kernel.
  req.set_from_ns(kStepNs);
  req.set_to_ns(2 * kStepNs + 200'000);
  absl::StatusOr<v1::GetEventsResponse> resp = engine->GetEvents(req);
  ASSERT_TRUE(resp.ok()) << resp.status();
  ASSERT_EQ(resp->processes_size(), 1);
  int kernels = 0;
  std::vector<v1::Collective> collectives;
  for (const v1::Event& e : resp->processes(0).events()) {
    kernels += e.has_kernel();
    if (e.has_collective()) collectives.push_back(e.collective());
  }
  EXPECT_EQ(kernels, 3);
  ASSERT_EQ(collectives.size(), 1u);
  EXPECT_EQ(collectives[0].correlation_id(), 103u);
  EXPECT_EQ(collectives[0].op(), "allreduce");
  EXPECT_EQ(collectives[0].dtype(), "Float");
  EXPECT_EQ(collectives[0].group(), "0");
  EXPECT_EQ(collectives[0].in_bytes(), 1000u);
  EXPECT_EQ(collectives[0].group_size(), 2u);

  // Unwindowed: every collective.
  v1::GetEventsRequest all;
  all.set_job_id("ddp");
  resp = engine->GetEvents(all);
  ASSERT_TRUE(resp.ok()) << resp.status();
  int total = 0;
  for (const v1::Event& e : resp->processes(0).events()) total += e.has_collective();
  EXPECT_EQ(total, 2);
}

}  // namespace
}  // namespace gpuspy::collector
