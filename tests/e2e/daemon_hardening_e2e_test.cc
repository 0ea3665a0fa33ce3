// gpuspyd against its own environment (issue 22): a second daemon on the same unix socket, a
// permissive umask, a damaged index. Real daemons, real producer (gpuspy-replay).
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "gpuspy/v1/services.grpc.pb.h"
#include "tests/support/all_events.h"
#include "tests/support/gpuspyd.h"
#include "tests/support/subprocess.h"

namespace gpuspy {
namespace {

using testing::Process;
using testing::RunResult;
using testing::TempDir;

// gpuspyd's argv over data dir `store`, TCP on an ephemeral port written to `port_file`.
std::vector<std::string> DaemonArgv(const std::string& store, const std::string& socket,
                                    const std::string& port_file) {
  return {GPUSPYD_BIN, "--listen",    "127.0.0.1:0", "--port-file", port_file, "--unix", socket,
          "--http",    "",            "--data-dir",  store,         "--log-level", "info"};
}

// The daemon that owns `socket`, over data dir dir/a (a.log, a.port.N in `dir`).
testing::GpuspydOptions SocketDaemon(const std::string& dir, const std::string& socket) {
  return {.binary = GPUSPYD_BIN, .dir = dir, .name = "a", .data_dir = dir + "/a",
          .log_level = "info", .flags = {"--unix", socket}};
}

// ListJobs over `address` ("unix:/path" or host:port) within two seconds.
grpc::Status ListJobs(const std::string& address, v1::ListJobsResponse* out) {
  auto stub = v1::Query::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  return stub->ListJobs(&ctx, v1::ListJobsRequest(), out);
}

bool Answers(const std::string& address) {
  v1::ListJobsResponse resp;
  return ListJobs(address, &resp).ok();
}

// A socket file nobody listens on: what a daemon killed with SIGKILL leaves behind.
void MakeStaleSocket(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << std::strerror(errno);
  close(fd);  // the file stays; connecting to it is refused
}

TEST(UnixSocketOwnershipE2E, ASecondDaemonIsRefusedAndTheFirstKeepsItsSocket) {
  TempDir dir;
  const std::string socket = dir.path() + "/sock/gpuspyd.sock";
  testing::Gpuspyd first(SocketDaemon(dir.path(), socket));
  ASSERT_TRUE(first.Start()) << first.log();
  ASSERT_TRUE(Answers("unix:" + socket));

  // Another data dir and TCP port: the socket path is all the two have in common.
  RunResult second = testing::Run(DaemonArgv(dir.path() + "/b", socket, dir.path() + "/b.port"), {},
                                  std::chrono::seconds(15));
  EXPECT_NE(second.exit_code, 0) << "a second daemon took the socket over:\n" << second.err;
  EXPECT_NE(second.exit_code, -9) << "the second daemon kept running:\n" << second.err;
  EXPECT_NE(second.err.find("unix socket " + socket + " is in use by another gpuspyd (pid " +
                            std::to_string(first.pid()) + ")"),
            std::string::npos)
      << second.err;
  EXPECT_TRUE(Answers("unix:" + socket)) << "the first daemon lost its socket";
  struct stat st;
  EXPECT_EQ(lstat(socket.c_str(), &st), 0);

  // The owner removes its socket when it stops.
  EXPECT_EQ(first.Stop(SIGTERM), 0);
  EXPECT_NE(lstat(socket.c_str(), &st), 0);
}

TEST(UnixSocketOwnershipE2E, AStaleSocketIsReplaced) {
  TempDir dir;
  const std::string socket = dir.path() + "/sock/gpuspyd.sock";
  std::filesystem::create_directories(dir.path() + "/sock");
  chmod((dir.path() + "/sock").c_str(), 0700);
  MakeStaleSocket(socket);
  testing::Gpuspyd daemon(SocketDaemon(dir.path(), socket));
  ASSERT_TRUE(daemon.Start()) << daemon.log();
  EXPECT_TRUE(Answers("unix:" + socket));
  EXPECT_NE(daemon.log().find("removed the stale socket"), std::string::npos);
}

// Every directory and file under `root` that another uid could read or enter.
std::vector<std::string> OpenToOthers(const std::string& root) {
  std::vector<std::string> out;
  auto check = [&](const std::filesystem::path& p) {
    struct stat st;
    if (lstat(p.c_str(), &st) != 0 || S_ISLNK(st.st_mode) || S_ISSOCK(st.st_mode)) return;
    if ((st.st_mode & 077) != 0) {
      char mode[8];
      std::snprintf(mode, sizeof(mode), "%04o", st.st_mode & 07777);
      out.push_back(p.string() + " " + mode);
    }
  };
  check(root);
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) check(entry.path());
  return out;
}

TEST(DataDirPermissionsE2E, PrivateUnderUmask022) {
  TempDir dir;
  const std::string store = dir.path() + "/store";
  std::vector<std::string> argv = {"/bin/sh", "-c", "umask 022 && exec \"$0\" \"$@\""};
  for (const std::string& a : DaemonArgv(store, "", dir.path() + "/port")) argv.push_back(a);
  Process daemon(argv, dir.path() + "/gpuspyd.log");
  const int port = testing::WaitForPortFile(dir.path() + "/port");
  ASSERT_GT(port, 0) << testing::ReadFile(dir.path() + "/gpuspyd.log");
  RunResult replay = testing::Run({REPLAY_BIN, "--collector", "127.0.0.1:" + std::to_string(port),
                                   "--job", "perm", "--ranks", "1", "--steps", "3"});
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  ASSERT_TRUE(std::filesystem::exists(store + "/index.sqlite-wal"));  // written while running
  const std::vector<std::string> running = OpenToOthers(store);
  EXPECT_EQ(daemon.Stop(SIGTERM), 0);
  EXPECT_TRUE(running.empty()) << ::testing::PrintToString(running);
  EXPECT_TRUE(OpenToOthers(store).empty()) << ::testing::PrintToString(OpenToOthers(store));
}

// Random bytes over the middle of a file, as the fault probe did.
void Scribble(const std::string& path) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(0, std::ios::end);
  const std::streamoff size = f.tellg();
  ASSERT_GT(size, 16 * 1024);
  std::mt19937 rng(22);
  std::string junk(8192, '\0');
  for (char& c : junk) c = static_cast<char>(rng());
  f.seekp(size / 2 - static_cast<std::streamoff>(junk.size()) / 2);
  f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
}

// job -> process key -> its events (serialized, sorted), as the Query service answers them.
using Answer = std::map<std::string, std::map<std::string, std::vector<std::string>>>;
Answer Everything(const std::string& address) {
  auto stub = v1::Query::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  v1::ListJobsResponse jobs;
  EXPECT_TRUE(ListJobs(address, &jobs).ok());
  Answer out;
  for (const auto& job : jobs.jobs()) {
    std::map<uint64_t, std::string> key_of;
    for (const auto& p : job.processes()) key_of[p.process_id()] = p.identity().process_key();
    v1::GetEventsRequest req;
    req.set_job_id(job.job_id());
    req.set_limit(5'000'000);
    v1::GetEventsResponse resp;
    EXPECT_TRUE(gpuspy::testing::GetAllEvents(stub.get(), req, &resp).ok());
    for (const auto& pe : resp.processes()) {
      auto& events = out[job.job_id()][key_of[pe.process_id()]];
      for (const auto& e : pe.events()) events.push_back(e.SerializeAsString());
      std::sort(events.begin(), events.end());
    }
  }
  return out;
}

// A daemon over `store` until the end of `body(address)`.
template <typename Body>
void WithDaemon(const std::string& dir, const std::string& store, const std::string& name, Body body) {
  testing::Gpuspyd daemon(
      {.binary = GPUSPYD_BIN, .dir = dir, .name = name, .data_dir = store, .log_level = "info"});
  ASSERT_TRUE(daemon.Start()) << daemon.log();
  body(daemon.address());
  EXPECT_EQ(daemon.Stop(SIGTERM), 0);  // checkpoints: everything is in index.sqlite
}

// Each process's steps as "number source", and each job's own step pattern.
std::map<std::string, std::vector<std::string>> StepsAndPatterns(const std::string& address) {
  auto stub = v1::Query::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  v1::ListJobsResponse jobs;
  EXPECT_TRUE(ListJobs(address, &jobs).ok());
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& job : jobs.jobs()) {
    out[job.job_id()].push_back("pattern " + job.step_pattern());
    grpc::ClientContext ctx;
    v1::ListStepsRequest req;
    req.set_job_id(job.job_id());
    v1::ListStepsResponse resp;
    EXPECT_TRUE(stub->ListSteps(&ctx, req, &resp).ok());
    for (const auto& s : resp.steps()) out[job.job_id()].push_back(std::to_string(s.number()) + " " + s.source());
    std::sort(out[job.job_id()].begin(), out[job.job_id()].end());
  }
  return out;
}

TEST(CorruptIndexE2E, ADamagedIndexIsRefusedAndRebuiltFromTheSegments) {
  TempDir dir;
  const std::string store = dir.path() + "/store";
  Answer before;
  std::map<std::string, std::vector<std::string>> steps_before;
  WithDaemon(dir.path(), store, "first", [&](const std::string& address) {
    for (const char* job : {"idx-a", "idx-b"}) {
      RunResult replay = testing::Run({REPLAY_BIN, "--collector", address, "--job", job, "--ranks", "2",
                                       "--steps", "40"});
      ASSERT_EQ(replay.exit_code, 0) << replay.err;
    }
    // idx-b's own pattern: every tenth step only (the index alone holds it).
    auto stub = v1::Query::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    v1::SetStepPatternRequest req;
    req.set_job_id("idx-b");
    req.set_step_pattern(R"(ProfilerStep#(\d+)0)");
    v1::SetStepPatternResponse resp;
    ASSERT_TRUE(stub->SetStepPattern(&ctx, req, &resp).ok());
    ASSERT_GT(resp.nvtx_steps(), 0u);
    before = Everything(address);
    steps_before = StepsAndPatterns(address);
  });
  const std::vector<std::string>& b = steps_before["idx-b"];
  ASSERT_NE(std::find(b.begin(), b.end(), R"(pattern ProfilerStep#(\d+)0)"), b.end());
  ASSERT_EQ(before.size(), 2u);
  ASSERT_EQ(before["idx-a"].size(), 2u);
  ASSERT_GT(before["idx-a"].begin()->second.size(), 1000u);

  Scribble(store + "/index.sqlite");
  RunResult start = testing::Run(DaemonArgv(store, "", dir.path() + "/refused.port"), {}, std::chrono::seconds(15));
  EXPECT_NE(start.exit_code, 0) << "started on a damaged index:\n" << start.err;
  EXPECT_NE(start.exit_code, -9) << "kept running on a damaged index:\n" << start.err;
  EXPECT_NE(start.err.find("gpuspyd: the index " + store + "/index.sqlite is damaged ("), std::string::npos)
      << start.err;
  EXPECT_NE(start.err.find("gpuspyd --rebuild-index"), std::string::npos) << start.err;

  RunResult rebuild = testing::Run({GPUSPYD_BIN, "--rebuild-index", "--data-dir", store});
  ASSERT_EQ(rebuild.exit_code, 0) << rebuild.out << rebuild.err;
  EXPECT_NE(rebuild.out.find("4 processes"), std::string::npos) << rebuild.out;
  EXPECT_NE(rebuild.out.find("1 job step pattern read back"), std::string::npos) << rebuild.out;
  WithDaemon(dir.path(), store, "rebuilt", [&](const std::string& address) {
    EXPECT_TRUE(Everything(address) == before) << "the rebuilt index answers differently";
    // The same steps, idx-b's found with its own pattern again.
    EXPECT_EQ(StepsAndPatterns(address), steps_before);
  });
}

// Issue 22, 6d: retention ran every 30 s only, so a fast ingest took the store to 3.8x
// --retention-bytes in between. Now each sealed segment triggers it: the segment files stay
// within about one segment of the limit. No wait on the period: it stays at its 30 s default.
TEST(RetentionE2E, StoredBytesStayNearTheLimitWhileIngestingFarPastIt) {
  TempDir dir;
  constexpr uint64_t kLimitBytes = 2 << 20;
  constexpr uint64_t kSegmentBytes = 256 << 10;
  testing::Gpuspyd daemon({.binary = GPUSPYD_BIN, .dir = dir.path(),
                           .flags = {"--retention-bytes", std::to_string(kLimitBytes),
                                     "--segment-bytes", std::to_string(kSegmentBytes)}});
  ASSERT_TRUE(daemon.Start()) << daemon.log();
  ASSERT_EQ(testing::Run({REPLAY_BIN, "--collector", daemon.address(), "--job", "flood",
                          "--ranks", "4", "--steps", "2000"})
                .exit_code,
            0);
  const std::filesystem::path segments = daemon.data_dir() + "/segments";
  auto stored = [&] {
    uint64_t bytes = 0;
    uint64_t last_id = 0;
    for (const auto& e : std::filesystem::directory_iterator(segments)) {
      if (e.path().extension() != ".gseg") continue;
      bytes += e.file_size();
      // seg-00000042.gseg: ids count up from 1, one per segment ever started.
      last_id = std::max<uint64_t>(last_id, std::stoull(e.path().stem().string().substr(4)));
    }
    return std::make_pair(bytes, last_id);
  };
  ASSERT_GT(stored().second * kSegmentBytes, 4 * kLimitBytes)
      << "the replay did not write well past the limit";
  // The last eviction runs on the retention thread just after the last roll: a moment's grace.
  uint64_t bytes = stored().first;
  for (int i = 0; i < 100 && bytes > kLimitBytes + kSegmentBytes; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    bytes = stored().first;
  }
  EXPECT_LE(bytes, kLimitBytes + kSegmentBytes) << daemon.log();
}

}  // namespace
}  // namespace gpuspy
