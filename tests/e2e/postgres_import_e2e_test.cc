// Imports into gpuspyd on the PostgreSQL hub store are complete or absent (issue 34 items 4, 5),
// as on the embedded store (store_hardening_e2e_test.cc): a `gpuspy import` killed mid-send leaves
// nothing that queries show, importing the file again stores it whole, a daemon that stopped with
// an import half sent drops it when it starts, and concurrent imports of one file store it once.
// Real gpuspyd with --postgres on the throwaway server of the gpuspy_postgres ctest fixture, the
// real CLI.
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "gpuspy/v1/services.grpc.pb.h"
#include "tests/support/all_events.h"
#include "tests/support/big_runtime_trace.h"
#include "tests/support/gpuspyd.h"
#include "tests/support/postgres_fixture.h"
#include "tests/support/subprocess.h"

namespace gpuspy {
namespace {

using testing::RunResult;
using testing::TempDir;

// The measured figures, for bench/results (grep "[figures]" in the test log).
void Figure(const std::string& line) { std::printf("[figures] %s\n", line.c_str()); }

std::unique_ptr<v1::Query::Stub> QueryStub(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  return v1::Query::NewStub(grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
}

v1::ListJobsResponse Jobs(const std::string& address) {
  grpc::ClientContext ctx;
  v1::ListJobsResponse out;
  EXPECT_TRUE(QueryStub(address)->ListJobs(&ctx, {}, &out).ok());
  return out;
}

uint64_t JobEvents(const std::string& address, const std::string& job) {
  const v1::ListJobsResponse jobs = Jobs(address);
  for (const auto& j : jobs.jobs()) {
    if (j.job_id() == job) return j.event_count();
  }
  return 0;
}

uint64_t ReadableEvents(const std::string& address) {
  uint64_t n = 0;
  const grpc::Status st = testing::ReadableEvents(QueryStub(address).get(), &n);
  EXPECT_TRUE(st.ok()) << st.error_message();
  return n;
}

uint64_t BatchesStored(const std::string& address) {
  grpc::ClientContext ctx;
  v1::GetStatsResponse resp;
  EXPECT_TRUE(QueryStub(address)->GetStats(&ctx, {}, &resp).ok());
  return resp.stats().batches_stored();
}

// Waits until `text` is in the daemon's log (or 10 s pass).
bool LogSays(const testing::Gpuspyd& d, const std::string& text) {
  for (int i = 0; i < 1000; ++i) {
    if (d.log().find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

class PostgresImportE2E : public testing::PostgresDatabaseTest {
 protected:
  // A daemon on this test's database; `name` tells its log apart from an earlier one's.
  testing::GpuspydOptions Hub(const std::string& name) {
    return {.binary = GPUSPYD_BIN, .dir = dir_.path(), .name = name, .log_level = "info",
            .flags = {"--postgres", server_->Conninfo(database_)}};
  }
  std::string Sql(const std::string& query) { return server_->QueryValue(database_, query); }

  // Starts `gpuspy import` of `trace` and SIGKILLs it once the daemon stored a first batch of it;
  // returns the batches stored then.
  uint64_t ImportKilledMidSend(const std::string& address, const std::string& trace) {
    testing::Process import({GPUSPY_BIN, "--collector", address, "import", "--job", "big", trace},
                            dir_.path() + "/import.log");
    uint64_t stored = 0;
    for (int i = 0; i < 60'000 && stored == 0 && import.running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      stored = BatchesStored(address);
    }
    EXPECT_GT(stored, 0u) << "the import ended before it sent anything";
    import.Stop(SIGKILL);
    return BatchesStored(address);
  }

  TempDir dir_;
};

// Before migration 005 the hub listed what a killed import had sent as a job of its own, and the
// next import of the file said "already imported", exit 0: partial for good.
TEST_F(PostgresImportE2E, AnImportKilledMidSendIsAbsentAndImportsAgainWhole) {
  constexpr int kCalls = 400'000;
  const std::string trace = testing::WriteBigRuntimeTrace(dir_.path(), kCalls);
  testing::Gpuspyd hub(Hub("hub"));
  ASSERT_TRUE(hub.Start()) << hub.log();
  const std::string address = hub.address();
  const uint64_t stored = ImportKilledMidSend(address, trace);
  Figure("postgres: import killed after " + std::to_string(stored) + " stored batches of ~" +
         std::to_string(kCalls / 4096 + 1));
  ASSERT_LT(stored, static_cast<uint64_t>(kCalls / 4096)) << "the import finished before it was killed";
  // The daemon saw the stream end without its close: the import stays pending, listed nowhere.
  ASSERT_TRUE(LogSays(hub, "ended before its last batch")) << hub.log();
  EXPECT_EQ(Jobs(address).jobs_size(), 0) << Jobs(address).DebugString();
  EXPECT_EQ(ReadableEvents(address), 0u);
  EXPECT_EQ(Sql("SELECT count(*) FROM gpuspy.processes WHERE pending"), "1");

  RunResult again = testing::Run({GPUSPY_BIN, "--collector", address, "import", "--job", "big", trace});
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_EQ(again.err.find("already imported"), std::string::npos) << again.err;
  EXPECT_EQ(JobEvents(address, "big"), static_cast<uint64_t>(kCalls));
  EXPECT_EQ(ReadableEvents(address), static_cast<uint64_t>(kCalls));
  // The partial copy was replaced, not added to: one process, no batch of the first attempt left.
  EXPECT_EQ(Sql("SELECT count(*) FROM gpuspy.processes"), "1");
  EXPECT_EQ(Sql("SELECT count(*) FROM gpuspy.processes WHERE pending"), "0");
  EXPECT_EQ(Sql("SELECT sum(event_count) FROM gpuspy.batches"), std::to_string(kCalls));
  // And it stays whole across a restart (committed, so not dropped as pending).
  EXPECT_EQ(hub.Stop(SIGTERM), 0) << hub.log();
  ASSERT_TRUE(hub.Start()) << hub.log();
  EXPECT_EQ(ReadableEvents(hub.address()), static_cast<uint64_t>(kCalls));
}

// The import's sender and then the daemon die: the next daemon on the database drops the pending
// import when it opens the store, with everything it owned.
TEST_F(PostgresImportE2E, APendingImportIsDroppedWhenTheDaemonStarts) {
  const std::string trace = testing::WriteBigRuntimeTrace(dir_.path(), 200'000);
  {
    testing::Gpuspyd hub(Hub("first"));
    ASSERT_TRUE(hub.Start()) << hub.log();
    ImportKilledMidSend(hub.address(), trace);
    hub.Stop(SIGKILL);
  }
  ASSERT_EQ(Sql("SELECT count(*) FROM gpuspy.processes WHERE pending"), "1");
  ASSERT_NE(Sql("SELECT count(*) FROM gpuspy.batches"), "0");
  testing::Gpuspyd hub(Hub("second"));
  ASSERT_TRUE(hub.Start()) << hub.log();
  EXPECT_NE(hub.log().find("dropped 1 import(s) left unfinished"), std::string::npos) << hub.log();
  EXPECT_EQ(Jobs(hub.address()).jobs_size(), 0);
  for (const char* table : {"processes", "batches", "dictionary", "steps"}) {
    EXPECT_EQ(Sql(std::string("SELECT count(*) FROM gpuspy.") + table), "0") << table;
  }
}

// Item 4 on the hub: concurrent imports of one file, each under its own job, store it once,
// under the job of the one import that reports it created.
TEST_F(PostgresImportE2E, OneFileImportedConcurrentlyIsStoredOnce) {
  constexpr int kCalls = 40'000;
  constexpr int kImports = 4;
  const std::string trace = testing::WriteBigRuntimeTrace(dir_.path(), kCalls);
  testing::Gpuspyd hub(Hub("hub"));
  ASSERT_TRUE(hub.Start()) << hub.log();
  std::vector<RunResult> results(kImports);
  std::vector<std::thread> threads;
  for (int i = 0; i < kImports; ++i) {
    threads.emplace_back([&, i] {
      results[i] = testing::Run({GPUSPY_BIN, "--collector", hub.address(), "import", "--job",
                                 "c" + std::to_string(i), trace});
    });
  }
  for (std::thread& t : threads) t.join();
  const v1::ListJobsResponse jobs = Jobs(hub.address());
  ASSERT_EQ(jobs.jobs_size(), 1) << jobs.DebugString();
  EXPECT_EQ(jobs.jobs(0).event_count(), static_cast<uint64_t>(kCalls));
  EXPECT_EQ(ReadableEvents(hub.address()), static_cast<uint64_t>(kCalls));
  EXPECT_EQ(Sql("SELECT count(*) FROM gpuspy.processes"), "1");
  int created = 0;
  for (int i = 0; i < kImports; ++i) {
    if (results[i].out.find("imported as job 'c" + std::to_string(i) + "'") == std::string::npos) continue;
    ++created;
    EXPECT_EQ(jobs.jobs(0).job_id(), "c" + std::to_string(i));
  }
  EXPECT_EQ(created, 1);
}

}  // namespace
}  // namespace gpuspy
