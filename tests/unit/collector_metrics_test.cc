// The collector's own families in /metrics: storage damage, and a node's forwarding to its hub,
// which only a node (whose engine has a stats source) shows.
#include "collector/metrics/collector_metrics.h"

#include <gtest/gtest.h>

#include "tests/support/query_engine_parts.h"
#include "tests/support/subprocess.h"

namespace gpuspy::collector {
namespace {

class CollectorMetricsTest : public ::testing::Test {
 protected:
  testing::TempDir dir_;
  testing::QueryEngineParts parts_{dir_.path()};
  std::unique_ptr<QueryEngine> engine_ = parts_.Engine();
};

TEST_F(CollectorMetricsTest, StorageDamageIsAlwaysShownForwardingOnlyOnANode) {
  std::string text = CollectorMetrics(engine_.get());
  EXPECT_NE(text.find("\ngpuspy_storage_segments_quarantined_total 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\ngpuspy_storage_records_lost_total 0\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("gpuspy_forward_"), std::string::npos) << text;

  engine_->set_stats_source([](v1::CollectorStats* s) {
    v1::ForwardStats* f = s->mutable_forward();
    f->set_hub("hub:7070");
    f->set_batches_forwarded(10);
    f->set_batches_already_at_hub(3);
    f->set_events_forwarded(4000);
    f->set_lag_batches(5);
    f->set_hub_unreachable(2);
    f->set_hub_refusals(7);
  });
  text = CollectorMetrics(engine_.get());
  for (const char* line : {"gpuspy_forward_batches_total{result=\"stored\"} 7\n",
                           "gpuspy_forward_batches_total{result=\"duplicate\"} 3\n",
                           "gpuspy_forward_events_total 4000\n", "gpuspy_forward_lag_batches 5\n",
                           "gpuspy_forward_hub_unreachable_total 2\n",
                           "gpuspy_forward_hub_refusals_total 7\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
  EXPECT_EQ(engine_->GetStats().stats().forward().hub(), "hub:7070");
}

}  // namespace
}  // namespace gpuspy::collector
