// End-to-end on the PostgreSQL hub store: real gpuspyd processes with --postgres against a
// throwaway PostgreSQL server, real producers (gpuspy-replay) and the real CLI. The same workload
// into an embedded-store daemon and a PostgreSQL-store daemon gives the same events, steps and
// reports; acknowledged batches survive SIGKILL of the daemon; a bad database is a clear error.
#include <signal.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "gpuspy/v1/services.grpc.pb.h"
#include "tests/support/all_events.h"
#include "tests/support/gpuspyd.h"
#include "tests/support/postgres_fixture.h"
#include "tests/support/subprocess.h"

namespace gpuspy {
namespace {

using testing::Process;
using testing::RunResult;
using testing::TempDir;

using testing::Gpuspyd;

// One gpuspyd on an ephemeral port, storing in PostgreSQL (`postgres` non-empty) or in a data dir.
testing::GpuspydOptions DaemonIn(const std::string& dir, const std::string& postgres) {
  testing::GpuspydOptions o{.binary = GPUSPYD_BIN, .dir = dir};
  if (!postgres.empty()) o.flags = {"--postgres", postgres};
  return o;
}

std::unique_ptr<v1::Query::Stub> QueryStub(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);  // a launch storm's events are more than the 4 MB default
  return v1::Query::NewStub(
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
}

// process_id -> rank of `job`: process ids are the store's own and differ between daemons.
std::map<uint64_t, int> Ranks(const std::string& address, const std::string& job) {
  std::map<uint64_t, int> rank_of;
  grpc::ClientContext ctx;
  v1::ListJobsRequest req;
  v1::ListJobsResponse resp;
  EXPECT_TRUE(QueryStub(address)->ListJobs(&ctx, req, &resp).ok());
  for (const auto& j : resp.jobs()) {
    if (j.job_id() != job) continue;
    for (const auto& p : j.processes()) rank_of[p.process_id()] = p.identity().rank();
  }
  return rank_of;
}

// rank -> sorted serialized events.
std::map<int, std::vector<std::string>> Events(const std::string& address, const std::string& job) {
  const std::map<uint64_t, int> rank_of = Ranks(address, job);
  std::map<int, std::vector<std::string>> out;
  v1::GetEventsRequest req;
  req.set_job_id(job);
  req.set_limit(5'000'000);
  v1::GetEventsResponse resp;
  grpc::Status st = gpuspy::testing::GetAllEvents(QueryStub(address).get(), req, &resp);
  EXPECT_TRUE(st.ok()) << st.error_message();
  EXPECT_FALSE(resp.truncated());
  for (const auto& pe : resp.processes()) {
    auto& events = out[rank_of.at(pe.process_id())];
    for (const auto& e : pe.events()) events.push_back(e.SerializeAsString());
  }
  for (auto& [rank, events] : out) std::sort(events.begin(), events.end());
  return out;
}

// `gpuspy --json report --job J` with each step's process id replaced by its rank: the verdicts
// (primary bottleneck, findings, evidence, breakdown) keyed by (rank, step).
std::map<std::pair<int, int64_t>, std::string> Reports(const std::string& address,
                                                       const std::string& job) {
  const std::map<uint64_t, int> rank_of = Ranks(address, job);
  RunResult r = testing::Run({GPUSPY_BIN, "--collector", address, "--json", "report", "--job", job});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  v1::GetStepReportResponse parsed;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &parsed).ok()) << r.out;
  std::map<std::pair<int, int64_t>, std::string> out;
  for (v1::StepReport report : parsed.reports()) {
    const int rank = rank_of.at(report.step().process_id());
    report.mutable_step()->set_process_id(0);
    std::string json;
    (void)google::protobuf::util::MessageToJsonString(report, &json);
    out[{rank, report.step().number()}] = json;
  }
  return out;
}

class PostgresE2E : public testing::PostgresDatabaseTest {
 protected:
  void TearDown() override {
    postgres_daemon_.reset();  // before its database goes
    PostgresDatabaseTest::TearDown();
  }
  Gpuspyd& PostgresDaemon() {
    if (postgres_daemon_ == nullptr) {
      postgres_daemon_ = std::make_unique<Gpuspyd>(DaemonIn(dir_.path(), server_->Conninfo(database_)));
    }
    return *postgres_daemon_;
  }
  RunResult Replay(const Gpuspyd& d, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {REPLAY_BIN, "--collector", d.address()};
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::Run(argv);
  }

  TempDir dir_;
  std::unique_ptr<Gpuspyd> postgres_daemon_;
};

TEST_F(PostgresE2E, SameEventsStepsAndVerdictsAsTheEmbeddedStore) {
  TempDir embedded_dir;
  Gpuspyd embedded(DaemonIn(embedded_dir.path(), ""));
  Gpuspyd& hub = PostgresDaemon();
  ASSERT_TRUE(embedded.Start()) << embedded.log();
  ASSERT_TRUE(hub.Start()) << hub.log();
  // Scenario -> the primary bottleneck its steady steps must get.
  const std::map<std::string, std::string> scenarios = {
      {"sync_stall", "sync_stall"}, {"launch_storm", "launch_storm"}, {"input_stall", "input_stall"}};
  for (const auto& [scenario, verdict] : scenarios) {
    const std::vector<std::string> workload = {"--job", scenario, "--ranks", "2", "--steps", "6",
                                               "--seed", "11", "--scenario", scenario,
                                               "--batch-events", "512"};
    for (Gpuspyd* d : {&embedded, &hub}) {
      RunResult r = Replay(*d, workload);
      ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    }
  }
  for (const auto& [job, verdict] : scenarios) {
    SCOPED_TRACE(job);
    const auto events = Events(embedded.address(), job);
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(Events(hub.address(), job), events);
    const auto reports = Reports(embedded.address(), job);
    ASSERT_EQ(reports.size(), 12u);  // 6 steps x 2 ranks
    const auto hub_reports = Reports(hub.address(), job);
    ASSERT_EQ(hub_reports.size(), reports.size());
    for (const auto& [key, json] : reports) EXPECT_EQ(hub_reports.at(key), json) << "rank " << key.first << " step " << key.second;
    // The verdict a user reads first: the scenario's pathology is the primary bottleneck.
    RunResult summary = testing::Run({GPUSPY_BIN, "--collector", hub.address(), "summary", "--job", job});
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    const size_t table = summary.out.find("PRIMARY BOTTLENECK");
    ASSERT_NE(table, std::string::npos) << summary.out;
    EXPECT_EQ(summary.out.find("\n" + verdict + " ", table), summary.out.find('\n', table)) << summary.out;
    RunResult embedded_summary =
        testing::Run({GPUSPY_BIN, "--collector", embedded.address(), "summary", "--job", job});
    EXPECT_EQ(summary.out, embedded_summary.out);
  }
  // The data lives in the database: the tables say so.
  EXPECT_EQ(server_->QueryValue(database_, "SELECT count(DISTINCT job_id) FROM gpuspy.processes"), "3");
  EXPECT_NE(server_->QueryValue(database_, "SELECT count(*) FROM gpuspy.batches"), "0");
}

TEST_F(PostgresE2E, AcknowledgedBatchesSurviveSigkillAndRestart) {
  Gpuspyd& hub = PostgresDaemon();
  ASSERT_TRUE(hub.Start()) << hub.log();
  RunResult r = Replay(hub, {"--job", "crash", "--ranks", "2", "--steps", "4", "--batch-events", "256"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto before = Events(hub.address(), "crash");
  ASSERT_EQ(before.size(), 2u);
  ASSERT_GT(before.at(0).size(), 500u);
  hub.Stop(SIGKILL);
  ASSERT_TRUE(hub.Start()) << hub.log();
  EXPECT_EQ(Events(hub.address(), "crash"), before);
  // A graceful stop and start again: same answer, and steps are still indexed.
  EXPECT_EQ(hub.Stop(SIGTERM), 0) << hub.log();
  ASSERT_TRUE(hub.Start()) << hub.log();
  EXPECT_EQ(Events(hub.address(), "crash"), before);
  grpc::ClientContext ctx;
  v1::ListStepsRequest req;
  req.set_job_id("crash");
  v1::ListStepsResponse resp;
  ASSERT_TRUE(QueryStub(hub.address())->ListSteps(&ctx, req, &resp).ok());
  EXPECT_EQ(resp.steps_size(), 8);
}

TEST_F(PostgresE2E, UnreachableOrBusyDatabaseIsAClearStartupError) {
  RunResult refused = testing::Run(
      {GPUSPYD_BIN, "--listen", "127.0.0.1:0", "--unix", "", "--http", "", "--postgres",
       "postgresql://gpuspy:secret@127.0.0.1:1/gpuspy?connect_timeout=5"},
      {}, std::chrono::seconds(30));
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("cannot connect to PostgreSQL at host=127.0.0.1 port=1"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(refused.err.find("secret"), std::string::npos) << refused.err;

  Gpuspyd& hub = PostgresDaemon();
  ASSERT_TRUE(hub.Start()) << hub.log();
  RunResult second = testing::Run({GPUSPYD_BIN, "--listen", "127.0.0.1:0", "--unix", "", "--http", "",
                                   "--postgres", server_->Conninfo(database_)},
                                  {}, std::chrono::seconds(30));
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_NE(second.err.find("in use by another gpuspyd"), std::string::npos) << second.err;
}

}  // namespace
}  // namespace gpuspy

namespace gpuspy {
namespace {

// `gpuspy jobs rename` and `jobs delete` on the hub store, through the CLI as on the embedded one.
TEST_F(PostgresE2E, JobsAreRenamedAndDeletedThroughTheCli) {
  Gpuspyd& hub = PostgresDaemon();
  ASSERT_TRUE(hub.Start()) << hub.log();
  for (const char* job : {"a", "b"}) {
    RunResult r = Replay(hub, {"--job", job, "--ranks", "2", "--steps", "3"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  const auto before = Events(hub.address(), "a");
  ASSERT_EQ(before.size(), 2u);
  auto cli = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {GPUSPY_BIN, "--collector", hub.address()});
    return testing::Run(args);
  };
  RunResult taken = cli({"jobs", "rename", "a", "b"});
  EXPECT_EQ(taken.exit_code, 1);
  EXPECT_NE(taken.err.find("job 'b' exists already"), std::string::npos) << taken.err;
  RunResult renamed = cli({"jobs", "rename", "a", "c"});
  ASSERT_EQ(renamed.exit_code, 0) << renamed.err;
  EXPECT_EQ(Events(hub.address(), "c"), before);
  RunResult deleted = cli({"jobs", "delete", "c"});
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  EXPECT_NE(deleted.out.find("deleted job 'c': 2 processes"), std::string::npos) << deleted.out;
  // What is left survives a restart as it was: b, untouched.
  EXPECT_EQ(hub.Stop(SIGTERM), 0) << hub.log();
  ASSERT_TRUE(hub.Start()) << hub.log();
  for (const char* gone : {"a", "c"}) {
    RunResult r = cli({"summary", "--job", gone});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find(std::string("unknown job '") + gone + "'"), std::string::npos) << r.err;
  }
  EXPECT_EQ(Events(hub.address(), "b").size(), 2u);
}

}  // namespace
}  // namespace gpuspy
