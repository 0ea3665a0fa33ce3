// Forwarder: a node's stored batches reach the hub speaking as their process (same identity, same
// sequences, the stored bytes), and forwarding resumes after the hub's last stored sequence, so a
// restart neither duplicates nor skips a batch. The hub is gpuspyd's real IngestService in-process.
#include "collector/forward/forwarder.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>

#include "codec/batch_encoder.h"
#include "collector/ingest/batch_ingestor.h"
#include "collector/ingest/ingest_service.h"
#include "collector/storage/dictionary_cache.h"
#include "grpcpp/grpcpp.h"
#include "tests/support/subprocess.h"

namespace gpuspy::collector {
namespace {

// A store with its ingestor: the node's, or the hub's behind its ingest service.
struct Collector {
  explicit Collector(const std::string& dir) {
    EmbeddedStoreOptions o;
    o.data_dir = dir;
    store = *OpenEmbeddedStore(o);
    dictionaries = std::make_unique<DictionaryCache>(store.get());
    ingestor = std::make_unique<BatchIngestor>(store.get(), dictionaries.get(), &counters,
                                               analysis::StepSegmenter());
  }
  // The process of `key` as this collector stores it (process_id 0 if absent).
  ProcessRecord Process(const std::string& job, const std::string& key) {
    absl::StatusOr<std::vector<ProcessRecord>> processes = store->ListProcesses(job);
    if (!processes.ok()) return {};
    for (const ProcessRecord& p : *processes) {
      if (p.identity.process_key() == key) return p;
    }
    return {};
  }

  std::unique_ptr<Store> store;
  std::unique_ptr<DictionaryCache> dictionaries;
  IngestCounters counters;
  ConnectionRegistry connections;
  std::unique_ptr<BatchIngestor> ingestor;
};

class ForwarderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    hub_service_ = std::make_unique<IngestService>(hub_.ingestor.get(), &hub_.connections,
                                                   &hub_.counters);
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &hub_port_);
    builder.RegisterService(hub_service_.get());
    hub_server_ = builder.BuildAndStart();
    ASSERT_NE(hub_server_, nullptr);
    ASSERT_GT(hub_port_, 0);
  }
  void TearDown() override { hub_server_->Shutdown(std::chrono::system_clock::now()); }

  // Stores `batches` batches of one process at the node (sequences 1..batches).
  void StoreAtNode(int batches) {
    v1::ProcessIdentity id;
    id.set_process_key("node-a:1234");
    id.set_job_id("train");
    id.set_host("node-a");
    const uint64_t process = node_.ingestor->Hello(id, 1)->process_id();
    StringTable strings;
    BatchEncoder encoder(&strings);
    for (int b = 1; b <= batches; ++b) {
      EventColumns ev;
      for (int k = 0; k < 10; ++k) {
        const int64_t t = b * 1'000'000 + k * 10'000;
        ev.kernels.push_back({t, t + 5'000, static_cast<uint64_t>(b * 100 + k),
                              strings.Intern("gemm"), {0, 1, 7}, {}, 0});
      }
      v1::EventBatch batch;
      encoder.Encode(ev, static_cast<uint64_t>(b), {}, &batch);
      ASSERT_TRUE(node_.ingestor->Ingest(process, batch).ok());
    }
  }
  ForwarderOptions Options() const {
    ForwarderOptions o;
    o.hub = "127.0.0.1:" + std::to_string(hub_port_);
    o.poll = absl::Milliseconds(20);
    o.ack_timeout = absl::Seconds(5);
    return o;
  }
  // Waits until the hub has `batches` batches of the node's process.
  bool HubHas(uint64_t batches) {
    for (int i = 0; i < 250; ++i) {
      if (hub_.Process("train", "node-a:1234").batch_count == batches) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  testing::TempDir dir_;
  Collector node_{dir_.path() + "/node"};
  Collector hub_{dir_.path() + "/hub"};
  std::unique_ptr<IngestService> hub_service_;
  std::unique_ptr<grpc::Server> hub_server_;
  int hub_port_ = 0;
};

TEST_F(ForwarderTest, EveryStoredBatchReachesTheHubAsItsProcess) {
  StoreAtNode(5);
  Forwarder forwarder(node_.store.get(), &node_.connections, Options());
  forwarder.Start();
  ASSERT_TRUE(HubHas(5));
  forwarder.Stop();
  const ProcessRecord at_hub = hub_.Process("train", "node-a:1234");
  EXPECT_EQ(at_hub.identity.host(), "node-a");
  EXPECT_EQ(at_hub.event_count, 50u);
  EXPECT_EQ(at_hub.sequence_gaps(), 0u);
  EXPECT_EQ(forwarder.stats().batches_forwarded.load(), 5u);
  EXPECT_EQ(forwarder.stats().events_forwarded.load(), 50u);
  EXPECT_EQ(forwarder.stats().lag_batches.load(), 0u);
}

TEST_F(ForwarderTest, ARestartResumesAfterWhatTheHubStoredWithoutDuplicates) {
  StoreAtNode(3);
  {
    Forwarder first(node_.store.get(), &node_.connections, Options());
    first.Start();
    ASSERT_TRUE(HubHas(3));
    first.Stop();
  }
  Forwarder second(node_.store.get(), &node_.connections, Options());
  second.Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  second.Stop();
  EXPECT_EQ(second.stats().batches_forwarded.load(), 0u);
  EXPECT_EQ(second.stats().batches_already_at_hub.load(), 0u);
  EXPECT_EQ(hub_.Process("train", "node-a:1234").batch_count, 3u);
  EXPECT_EQ(hub_.counters.batches_rejected.load(), 0u);
}

TEST_F(ForwarderTest, AnUnreachableHubIsCountedAndNothingIsLost) {
  StoreAtNode(2);
  ForwarderOptions o = Options();
  o.hub = "127.0.0.1:" + std::to_string(testing::FreeTcpPort());
  o.connect_timeout = absl::Milliseconds(200);
  Forwarder forwarder(node_.store.get(), &node_.connections, o);
  forwarder.Start();
  for (int i = 0; i < 100 && forwarder.stats().connect_failures.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  forwarder.Stop();
  EXPECT_GT(forwarder.stats().connect_failures.load(), 0u);
  EXPECT_EQ(forwarder.stats().batches_forwarded.load(), 0u);
  EXPECT_EQ(node_.Process("train", "node-a:1234").batch_count, 2u);
}

}  // namespace
}  // namespace gpuspy::collector
