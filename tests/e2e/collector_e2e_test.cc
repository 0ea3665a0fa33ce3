// End-to-end: real gpuspyd processes, a real producer process (gpuspy-replay) streaming over
// gRPC, queries through the real Query service and the real CLI binary.
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gpuspy/v1/services.grpc.pb.h"
#include "model/units.h"
#include "tests/support/all_events.h"
#include "tests/support/gpuspyd.h"
#include "tests/support/subprocess.h"

namespace gpuspy {
namespace {

using testing::Process;

using testing::RunResult;
using testing::TempDir;

std::unique_ptr<v1::Query::Stub> QueryStub(const std::string& address) {
  return v1::Query::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
}

// Canonical form of an event for comparing multisets: its serialized bytes.
std::string Canonical(const v1::Event& e) {
  std::string s;
  e.SerializeToString(&s);
  return s;
}

// rank -> sorted canonical events, from gpuspy-replay --dump-events.
std::map<int, std::vector<std::string>> ReadDump(const std::string& path) {
  std::map<int, std::vector<std::string>> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    // {"rank": R, "event": {...}}: split without a JSON library to keep the test honest about
    // the format the tool promises.
    const size_t rank_pos = line.find("\"rank\":");
    const size_t event_pos = line.find("\"event\":");
    if (rank_pos == std::string::npos || event_pos == std::string::npos) {
      ADD_FAILURE() << "bad dump line: " << line;
      continue;
    }
    const int rank = std::stoi(line.substr(rank_pos + 7));
    std::string json = line.substr(event_pos + 8);
    json = json.substr(0, json.rfind('}'));  // drop the outer object's closing brace
    v1::Event e;
    auto st = google::protobuf::util::JsonStringToMessage(json, &e);
    if (!st.ok()) {
      ADD_FAILURE() << "bad event json: " << st.ToString() << " in " << json;
      continue;
    }
    out[rank].push_back(Canonical(e));
  }
  for (auto& [rank, events] : out) std::sort(events.begin(), events.end());
  return out;
}

// rank -> sorted canonical events, as the collector returns them for `job`.
std::map<int, std::vector<std::string>> QueryEvents(const std::string& address,
                                                    const std::string& job) {
  auto stub = QueryStub(address);
  std::map<uint64_t, int> rank_of;
  {
    grpc::ClientContext ctx;
    v1::ListJobsRequest req;
    v1::ListJobsResponse resp;
    EXPECT_TRUE(stub->ListJobs(&ctx, req, &resp).ok());
    for (const auto& j : resp.jobs()) {
      if (j.job_id() != job) continue;
      for (const auto& p : j.processes()) rank_of[p.process_id()] = p.identity().rank();
    }
  }
  std::map<int, std::vector<std::string>> out;
  v1::GetEventsRequest req;
  req.set_job_id(job);
  req.set_limit(5'000'000);
  v1::GetEventsResponse resp;
  grpc::Status st = gpuspy::testing::GetAllEvents(stub.get(), req, &resp);
  EXPECT_TRUE(st.ok()) << st.error_message();
  EXPECT_FALSE(resp.truncated());
  for (const auto& pe : resp.processes()) {
    auto& events = out[rank_of.at(pe.process_id())];
    for (const auto& e : pe.events()) events.push_back(Canonical(e));
  }
  for (auto& [rank, events] : out) std::sort(events.begin(), events.end());
  return out;
}

class CollectorE2E : public ::testing::Test {
 protected:
  TempDir dir_;
  // One gpuspyd on an ephemeral port with its own data dir; restartable on the same data.
  testing::Gpuspyd daemon_{{.binary = GPUSPYD_BIN, .dir = dir_.path()}};
};

TEST_F(CollectorE2E, EveryReplayedEventComesBackAndSurvivesRestart) {
  ASSERT_TRUE(daemon_.Start()) << daemon_.log();
  const std::string dump = dir_.path() + "/sent.jsonl";
  RunResult replay = testing::Run({REPLAY_BIN, "--collector", daemon_.address(), "--job", "e2e", "--ranks",
                          "2", "--steps", "6", "--seed", "7", "--dump-events", dump});
  ASSERT_EQ(replay.exit_code, 0) << replay.out << replay.err;

  const auto sent = ReadDump(dump);
  ASSERT_EQ(sent.size(), 2u);
  ASSERT_GT(sent.at(0).size(), 1000u);
  EXPECT_EQ(QueryEvents(daemon_.address(), "e2e"), sent);

  // Graceful stop flushes; the restarted daemon serves the same events from disk.
  EXPECT_EQ(daemon_.Stop(SIGTERM), 0) << daemon_.log();
  ASSERT_TRUE(daemon_.Start()) << daemon_.log();
  EXPECT_EQ(QueryEvents(daemon_.address(), "e2e"), sent);

  // Steps were segmented from the ProfilerStep NVTX ranges: 6 per rank.
  auto stub = QueryStub(daemon_.address());
  grpc::ClientContext ctx;
  v1::ListStepsRequest req;
  req.set_job_id("e2e");
  v1::ListStepsResponse resp;
  ASSERT_TRUE(stub->ListSteps(&ctx, req, &resp).ok());
  EXPECT_EQ(resp.steps_size(), 12);
}

TEST_F(CollectorE2E, AcknowledgedBatchesSurviveSigkill) {
  ASSERT_TRUE(daemon_.Start()) << daemon_.log();
  const std::string dump = dir_.path() + "/sent.jsonl";
  RunResult replay = testing::Run({REPLAY_BIN, "--collector", daemon_.address(), "--job", "crash",
                          "--ranks", "1", "--steps", "4", "--dump-events", dump});
  ASSERT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  // The producer saw every batch acknowledged; a crash right after must lose none of them.
  daemon_.Stop(SIGKILL);
  ASSERT_TRUE(daemon_.Start()) << daemon_.log();
  EXPECT_EQ(QueryEvents(daemon_.address(), "crash"), ReadDump(dump));
}

TEST_F(CollectorE2E, CliShowsJobsAndPerStepReport) {
  ASSERT_TRUE(daemon_.Start()) << daemon_.log();
  ASSERT_EQ(testing::Run({REPLAY_BIN, "--collector", daemon_.address(), "--job", "clijob", "--ranks", "2",
                 "--steps", "5"})
                .exit_code,
            0);
  RunResult jobs = testing::Run({GPUSPY_BIN, "--collector", daemon_.address(), "jobs"});
  ASSERT_EQ(jobs.exit_code, 0) << jobs.err;
  EXPECT_NE(jobs.out.find("clijob"), std::string::npos) << jobs.out;

  // --job narrows the JSON too: a second job exists, and only the one asked for comes back.
  ASSERT_EQ(testing::Run({REPLAY_BIN, "--collector", daemon_.address(), "--job", "otherjob",
                          "--ranks", "1", "--steps", "3"})
                .exit_code,
            0);
  RunResult one = testing::Run(
      {GPUSPY_BIN, "--collector", daemon_.address(), "--json", "jobs", "--job", "clijob"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  v1::ListJobsResponse listed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(one.out, &listed).ok()) << one.out;
  ASSERT_EQ(listed.jobs_size(), 1) << one.out;
  EXPECT_EQ(listed.jobs(0).job_id(), "clijob");

  RunResult report = testing::Run(
      {GPUSPY_BIN, "--collector", daemon_.address(), "--json", "report", "--job", "clijob",
       "--last", "3"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  v1::GetStepReportResponse parsed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(report.out, &parsed).ok()) << report.out;
  ASSERT_EQ(parsed.reports_size(), 6);  // 3 steps x 2 ranks
  for (const auto& r : parsed.reports()) {
    EXPECT_GT(r.breakdown().wall_ns(), 0);
    EXPECT_GT(r.breakdown().kernel_count(), 0u);
    EXPECT_LE(r.breakdown().gpu_busy_ns(), r.breakdown().wall_ns());
    EXPECT_GE(r.step().number(), 2);  // the last 3 of steps 0..4
  }

  RunResult human = testing::Run({GPUSPY_BIN, "--collector", daemon_.address(), "report", "--job",
                         "clijob", "--step", "3"});
  ASSERT_EQ(human.exit_code, 0) << human.err;
  EXPECT_NE(human.out.find("3"), std::string::npos);
}

// One attribution behind every figure of a step: the CLI's text line, its JSON, and the
// sync_stall finding say the same numbers, and the idle parts add up to the idle time.
TEST_F(CollectorE2E, TheTextTheJsonAndTheFindingAgreeOnAStepsNumbers) {
  ASSERT_TRUE(daemon_.Start()) << daemon_.log();
  ASSERT_EQ(testing::Run({REPLAY_BIN, "--collector", daemon_.address(), "--job", "agree", "--scenario",
                          "sync_stall", "--steps", "5"}).exit_code, 0);
  RunResult json = testing::Run({GPUSPY_BIN, "--collector", daemon_.address(), "--json", "report",
                                 "--job", "agree", "--step", "3"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  v1::GetStepReportResponse parsed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json.out, &parsed).ok()) << json.out;
  ASSERT_EQ(parsed.reports_size(), 1);
  const v1::StepReport& r = parsed.reports(0);
  const v1::StepBreakdown& b = r.breakdown();
  EXPECT_EQ(b.idle_sync_blocked_ns() + b.idle_launch_bound_ns() + b.idle_input_ns() +
                b.idle_host_other_ns() + b.idle_cuda_call_ns(), b.gpu_idle_ns());
  ASSERT_EQ(r.primary_bottleneck(), v1::sync_stall);
  ASSERT_GT(r.findings_size(), 0);
  // The finding's loss is what its fix saves (the replay); the idle it describes is the
  // breakdown's.
  ASSERT_TRUE(r.findings(0).has_what_if());
  EXPECT_EQ(r.findings(0).lost_ns(), r.findings(0).what_if().gain_ns());
  EXPECT_GT(r.findings(0).lost_ns(), 0);
  EXPECT_LE(r.findings(0).lost_ns(), b.wall_ns());

  RunResult text = testing::Run({GPUSPY_BIN, "--collector", daemon_.address(), "report", "--job",
                                 "agree", "--step", "3"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  auto ms = [](int64_t ns) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.2f", ns / 1e6);
    return std::string(buf);
  };
  const std::string line = "GPU idle " + ms(b.gpu_idle_ns()) + " ms = sync " + ms(b.idle_sync_blocked_ns()) +
                           " + launch " + ms(b.idle_launch_bound_ns()) + " + input " +
                           ms(b.idle_input_ns()) + " + host " + ms(b.idle_host_other_ns()) +
                           " + in CUDA calls " + ms(b.idle_cuda_call_ns());
  EXPECT_NE(text.out.find(line), std::string::npos) << line << "\n" << text.out;
  EXPECT_NE(text.out.find("(~" + ms(r.findings(0).lost_ns()) + " ms lost)"), std::string::npos) << text.out;

  // The what-if line, as the text says it.
  EXPECT_NE(text.out.find("what if: would take " + FormatMs(r.findings(0).what_if().step_ns())),
            std::string::npos) << text.out;

  // The finding's evidence is data: the breakdown's sync idle, in a unit, and as text.
  const v1::Evidence* idle = nullptr;
  for (const v1::Evidence& e : r.findings(0).evidence()) {
    if (e.key() == "gpu_idle_from_syncs") idle = &e;
  }
  ASSERT_NE(idle, nullptr);
  EXPECT_EQ(idle->unit(), "ns");
  EXPECT_EQ(static_cast<int64_t>(idle->quantity()), b.idle_sync_blocked_ns());
  EXPECT_NE(text.out.find(idle->value()), std::string::npos) << idle->value() << "\n" << text.out;

  // --json=flat: the same answer with its integers as numbers.
  RunResult flat = testing::Run({GPUSPY_BIN, "--collector", daemon_.address(), "--json=flat",
                                 "report", "--job", "agree", "--step", "3"});
  ASSERT_EQ(flat.exit_code, 0) << flat.err;
  const nlohmann::json f = nlohmann::json::parse(flat.out);
  const nlohmann::json& fr = f["reports"][0];
  ASSERT_TRUE(fr["breakdown"]["gpu_idle_ns"].is_number_integer()) << flat.out;
  EXPECT_EQ(fr["breakdown"]["gpu_idle_ns"].get<int64_t>(), b.gpu_idle_ns());
  EXPECT_EQ(fr["findings"][0]["lost_ns"].get<int64_t>(), r.findings(0).lost_ns());
  EXPECT_EQ(fr["breakdown"]["idle_input_ns"].get<int64_t>(), b.idle_input_ns()) << "zeros present";
}

TEST_F(CollectorE2E, CliErrorsAreOneClearLineAndNonZero) {
  ASSERT_TRUE(daemon_.Start()) << daemon_.log();
  RunResult unknown =
      testing::Run({GPUSPY_BIN, "--collector", daemon_.address(), "report", "--job", "nosuchjob"});
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_NE(unknown.err.find("unknown job 'nosuchjob'"), std::string::npos) << unknown.err;

  // Usage errors: one line that names the problem and where the usage is, exit 2, no help dump.
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> usage = {
      {{"nosuchcmd"}, "gpuspy: 'nosuchcmd' is not a command (see gpuspy --help)"},
      {{"--collector", "127.0.0.1:1", "reprot", "--job", "x"}, "'reprot' is not a command"},
      {{}, "A subcommand is required (see gpuspy --help)"},
      {{"report", "--nosuchflag"}, "see gpuspy report --help"},
      {{"attach", "--pid", "abc"}, "'abc' is not a process id"},
      {{"detach", "--pid", "0"}, "'0' is not a process id"},
      {{"analyze", dir_.path() + "/nonexistent.json"}, "see gpuspy analyze --help"},
  };
  for (const Case& c : usage) {
    std::vector<std::string> argv = {GPUSPY_BIN};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    RunResult r = testing::Run(argv);
    const std::string what = c.args.empty() ? "(nothing)" : c.args[0];
    EXPECT_EQ(r.exit_code, 2) << what << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.out, "") << what;
  }

  daemon_.Stop(SIGTERM);
  RunResult down = testing::Run({GPUSPY_BIN, "--collector", daemon_.address(), "--timeout", "2", "jobs"});
  EXPECT_NE(down.exit_code, 0);
  EXPECT_NE(down.err.find("cannot reach gpuspyd"), std::string::npos) << down.err;
}

TEST_F(CollectorE2E, BothBinariesSayTheirVersionWithoutADaemon) {
  for (const char* bin : {GPUSPY_BIN, GPUSPYD_BIN}) {
    RunResult v = testing::Run({bin, "--version"});
    EXPECT_EQ(v.exit_code, 0) << bin << v.err;
    EXPECT_NE(v.out.find(" 0."), std::string::npos) << bin << ": " << v.out;
  }
}

// Completion scripts and the man page come from the CLI's own definitions: every command the
// help lists is in each, the bash script parses, and groff reads the page without a warning.
TEST_F(CollectorE2E, CompletionAndManPageCoverEveryCommand) {
  RunResult help = testing::Run({GPUSPY_BIN, "--help"});
  ASSERT_EQ(help.exit_code, 0) << help.err;
  const std::string commands_header = "Subcommands:";
  const size_t at = help.out.find(commands_header);
  ASSERT_NE(at, std::string::npos) << help.out;
  std::vector<std::string> commands;
  std::istringstream lines(help.out.substr(at + commands_header.size()));
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string first;
    if (words >> first) commands.push_back(first);
  }
  ASSERT_GE(commands.size(), 15u) << help.out;
  RunResult bash = testing::Run({GPUSPY_BIN, "completion", "bash"});
  RunResult zsh = testing::Run({GPUSPY_BIN, "completion", "zsh"});
  RunResult man = testing::Run({GPUSPY_BIN, "man"});
  for (const RunResult* r : {&bash, &zsh, &man}) ASSERT_EQ(r->exit_code, 0) << r->err;
  for (const std::string& c : commands) {
    EXPECT_NE(bash.out.find(" " + c + ") opts=\""), std::string::npos) << c;
    EXPECT_NE(zsh.out.find("'" + c + ":"), std::string::npos) << c;
    EXPECT_NE(man.out.find(".SS " + c + "\n"), std::string::npos) << c;
  }
  EXPECT_NE(bash.out.find("diff) opts=\"-h --help --threads"), std::string::npos) << bash.out;
  const std::string script = dir_.path() + "/gpuspy.bash", page = dir_.path() + "/gpuspy.1";
  std::ofstream(script) << bash.out;
  std::ofstream(page) << man.out;
  RunResult parses = testing::Run({"/bin/bash", "-n", script});
  EXPECT_EQ(parses.exit_code, 0) << parses.err;
  if (std::filesystem::exists("/usr/bin/groff")) {
    RunResult groff = testing::Run({"/usr/bin/groff", "-man", "-ww", "-z", page});
    EXPECT_EQ(groff.exit_code, 0) << groff.err;
    EXPECT_EQ(groff.err, "");
  }
  RunResult fish = testing::Run({GPUSPY_BIN, "completion", "fish"});
  EXPECT_EQ(fish.exit_code, 2);
}

TEST_F(CollectorE2E, DaemonRejectsBadFlagsAndBusyPort) {
  RunResult bad = testing::Run({GPUSPYD_BIN, "--fsync", "sometimes", "--data-dir", dir_.path()});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE((bad.out + bad.err).find("--fsync"), std::string::npos) << bad.out << bad.err;

  RunResult bad_age = testing::Run({GPUSPYD_BIN, "--retention-age", "forever", "--data-dir", dir_.path()});
  EXPECT_EQ(bad_age.exit_code, 2);
  EXPECT_NE(bad_age.err.find("--retention-age"), std::string::npos) << bad_age.err;

  ASSERT_TRUE(daemon_.Start()) << daemon_.log();
  RunResult busy = testing::Run({GPUSPYD_BIN, "--listen", daemon_.address(), "--unix", "", "--http", "", "--data-dir",
                        dir_.path() + "/other"},
                       {}, std::chrono::seconds(20));
  EXPECT_EQ(busy.exit_code, 1);
  EXPECT_NE(busy.err.find("cannot listen on " + daemon_.address()), std::string::npos)
      << busy.err;
}

}  // namespace
}  // namespace gpuspy
