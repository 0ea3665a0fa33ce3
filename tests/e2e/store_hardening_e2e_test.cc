// The store against damage and interrupted imports (issue 34): a rebuild after a quarantined or
// deleted segment keeps every batch that can be read; an import is complete or absent, also when
// its sender is killed mid-send or another import of the same file races it. Real daemons, real
// producers (gpuspy-replay, gpuspy import).
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <sqlite3.h>
#include <gtest/gtest.h>

#include "gpuspy/v1/services.grpc.pb.h"
#include "tests/support/all_events.h"
#include "tests/support/big_runtime_trace.h"
#include "tests/support/gpuspyd.h"
#include "tests/support/subprocess.h"

namespace gpuspy {
namespace {

namespace fs = std::filesystem;
using testing::RunResult;
using testing::TempDir;

// Small segments and batches: a short replay fills several segments, each holding some early
// batches of every rank.
constexpr char kSegmentBytes[] = "16384";
constexpr char kBatchEvents[] = "256";

// The measured figures, for bench/results (grep "[figures]" in the test log).
void Figure(const std::string& line) { std::printf("[figures] %s\n", line.c_str()); }

std::unique_ptr<v1::Query::Stub> QueryStub(const std::string& address) {
  return v1::Query::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
}

v1::ListJobsResponse Jobs(const std::string& address) {
  grpc::ClientContext ctx;
  v1::ListJobsResponse out;
  EXPECT_TRUE(QueryStub(address)->ListJobs(&ctx, {}, &out).ok());
  return out;
}

uint64_t ReadableEvents(const std::string& address) {
  uint64_t n = 0;
  const grpc::Status st = testing::ReadableEvents(QueryStub(address).get(), &n);
  EXPECT_TRUE(st.ok()) << st.error_message();
  return n;
}

testing::GpuspydOptions StoreDaemon(const std::string& dir, const std::string& name) {
  return {.binary = GPUSPYD_BIN, .dir = dir, .name = name, .data_dir = dir + "/store",
          .log_level = "info", .flags = {"--segment-bytes", kSegmentBytes}};
}

// Runs `body(address)` against a daemon over dir/store, then stops it cleanly.
template <typename Body>
void WithDaemon(const std::string& dir, const std::string& name, Body body) {
  testing::Gpuspyd daemon(StoreDaemon(dir, name));
  ASSERT_TRUE(daemon.Start()) << daemon.log();
  body(daemon.address());
  EXPECT_EQ(daemon.Stop(SIGTERM), 0) << daemon.log();
}

std::vector<fs::path> Segments(const std::string& store) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(store + "/segments")) {
    if (e.path().extension() == ".gseg") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// 512 random bytes in the middle of `path`: one or two records fail their checksum.
void Damage(const fs::path& path) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(0, std::ios::end);
  const std::streamoff size = f.tellg();
  ASSERT_GT(size, 4096);
  std::mt19937 rng(34);
  std::string junk(512, '\0');
  for (char& c : junk) c = static_cast<char>(rng());
  f.seekp(size / 2);
  f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
}

// The "N events" (or "1 event") that ends gpuspyd --rebuild-index's summary line.
uint64_t RebuiltEvents(const std::string& out) {
  size_t at = out.find(" events\n");
  if (at == std::string::npos) at = out.find(" event\n");
  if (at == std::string::npos) return 0;
  const size_t from = out.rfind(' ', at - 1);
  return std::stoull(out.substr(from + 1, at - from - 1));
}

void Replay(const std::string& address, const std::string& job, int ranks = 2, int steps = 200) {
  RunResult r = testing::Run({REPLAY_BIN, "--collector", address, "--job", job, "--ranks", std::to_string(ranks),
                              "--steps", std::to_string(steps), "--batch-events", kBatchEvents});
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

// Quarantine moves the damaged segment's readable records to the newest segment, so file order
// puts a process's early batches (its name definitions) after later ones. The rebuild replayed
// file order and lost most of an undamaged job (69,046 -> 20,903 events).
TEST(RebuildAfterDamageE2E, ARebuildAfterQuarantineKeepsWhatTheDaemonCouldRead) {
  TempDir dir;
  const std::string store = dir.path() + "/store";
  uint64_t intact = 0;
  uint64_t after_quarantine = 0;
  WithDaemon(dir.path(), "first", [&](const std::string& address) {
    Replay(address, "q");
    intact = ReadableEvents(address);
  });
  const std::vector<fs::path> segments = Segments(store);
  ASSERT_GE(segments.size(), 4u) << "the replay did not fill several segments";
  Damage(segments[1]);
  WithDaemon(dir.path(), "second", [&](const std::string& address) {
    after_quarantine = ReadableEvents(address);  // reading finds the damage and quarantines
  });
  ASSERT_TRUE(fs::exists(store + "/segments/quarantine")) << "the damage was not found";
  ASSERT_LT(after_quarantine, intact);
  ASSERT_GT(after_quarantine, intact / 2);

  RunResult rebuild = testing::Run({GPUSPYD_BIN, "--rebuild-index", "--data-dir", store});
  ASSERT_EQ(rebuild.exit_code, 0) << rebuild.out << rebuild.err;
  Figure("rebuild after quarantine: intact " + std::to_string(intact) + ", daemon after quarantine " +
                  std::to_string(after_quarantine) + ", rebuilt " + std::to_string(RebuiltEvents(rebuild.out)));
  EXPECT_EQ(RebuiltEvents(rebuild.out), after_quarantine) << rebuild.out << rebuild.err;
  WithDaemon(dir.path(), "rebuilt", [&](const std::string& address) {
    EXPECT_EQ(ReadableEvents(address), after_quarantine);
  });
}

// A deleted segment takes the batches that defined the processes' names with it: every later
// batch used to be refused ("refers to undefined ref"), 48,143 -> 0 events. Now each is kept,
// the names it cannot resolve stood in for, and counted.
TEST(RebuildAfterDamageE2E, ADeletedSegmentLosesOnlyItsOwnBatches) {
  TempDir dir;
  const std::string store = dir.path() + "/store";
  uint64_t remaining = 0;
  WithDaemon(dir.path(), "first", [&](const std::string& address) { Replay(address, "d"); });
  const std::vector<fs::path> segments = Segments(store);
  ASSERT_GE(segments.size(), 4u);
  fs::remove(segments[0]);  // every rank's first batches: the definitions of its names
  // The daemon drops the vanished segment's rows on open: what it answers is what is left.
  WithDaemon(dir.path(), "second", [&](const std::string& address) { remaining = ReadableEvents(address); });
  ASSERT_GT(remaining, 0u);

  RunResult rebuild = testing::Run({GPUSPYD_BIN, "--rebuild-index", "--data-dir", store});
  ASSERT_EQ(rebuild.exit_code, 0) << rebuild.out << rebuild.err;
  Figure("rebuild after a deleted segment: left in the other segments " + std::to_string(remaining) +
                  ", rebuilt " + std::to_string(RebuiltEvents(rebuild.out)));
  EXPECT_EQ(RebuiltEvents(rebuild.out), remaining) << rebuild.out << rebuild.err;
  EXPECT_NE(rebuild.out.find("use names defined by a batch that is lost"), std::string::npos) << rebuild.out;
  WithDaemon(dir.path(), "rebuilt", [&](const std::string& address) {
    EXPECT_EQ(ReadableEvents(address), remaining);
  });
}


uint64_t BatchesStored(const std::string& address) {
  grpc::ClientContext ctx;
  v1::GetStatsResponse resp;
  EXPECT_TRUE(QueryStub(address)->GetStats(&ctx, {}, &resp).ok());
  return resp.stats().batches_stored();
}

uint64_t JobEvents(const std::string& address, const std::string& job) {
  const v1::ListJobsResponse jobs = Jobs(address);
  for (const auto& j : jobs.jobs()) {
    if (j.job_id() == job) return j.event_count();
  }
  return 0;
}

// A process as the index lists it: its job and rank, and each stored batch's events by sequence.
struct IndexedProcess {
  std::string job;
  int rank = -1;
  std::map<uint64_t, uint64_t> events_by_sequence;
  bool operator==(const IndexedProcess&) const = default;
};
std::ostream& operator<<(std::ostream& os, const IndexedProcess& p) {
  return os << p.job << " rank " << p.rank << ", " << p.events_by_sequence.size() << " batches";
}

uint64_t SegmentId(const fs::path& segment) {
  unsigned long long id = 0;
  EXPECT_EQ(std::sscanf(segment.filename().c_str(), "seg-%llu.gseg", &id), 1) << segment;
  return id;
}

// The processes of the index of `store` by process key, with the batches outside the segments
// `lost`; a process left without batches is not listed (a rebuild cannot know of it).
std::map<std::string, IndexedProcess> Indexed(const std::string& store, const std::set<uint64_t>& lost = {}) {
  std::map<std::string, IndexedProcess> out;
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2((store + "/index.sqlite").c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db,
                               "SELECT p.identity, b.sequence, b.event_count, b.segment_id FROM processes p "
                               "JOIN batches b ON b.process_id = p.process_id WHERE b.sequence > 0",
                               -1, &q, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  while (q != nullptr && sqlite3_step(q) == SQLITE_ROW) {
    if (lost.count(static_cast<uint64_t>(sqlite3_column_int64(q, 3))) > 0) continue;
    v1::ProcessIdentity identity;
    EXPECT_TRUE(identity.ParseFromArray(sqlite3_column_blob(q, 0), sqlite3_column_bytes(q, 0)));
    IndexedProcess& p = out[identity.process_key()];
    p.job = identity.job_id();
    p.rank = identity.rank();
    p.events_by_sequence[static_cast<uint64_t>(sqlite3_column_int64(q, 1))] =
        static_cast<uint64_t>(sqlite3_column_int64(q, 2));
  }
  sqlite3_finalize(q);
  sqlite3_close(db);
  return out;
}

// The segments holding batches of `job`'s processes, by id.
std::set<uint64_t> SegmentsOfJob(const std::string& store, const std::string& job) {
  std::set<uint64_t> out;
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2((store + "/index.sqlite").c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db,
                               "SELECT DISTINCT b.segment_id FROM batches b JOIN processes p "
                               "ON p.process_id = b.process_id WHERE p.job_id = ? AND b.sequence > 0",
                               -1, &q, nullptr),
            SQLITE_OK);
  sqlite3_bind_text(q, 1, job.c_str(), -1, SQLITE_TRANSIENT);
  while (q != nullptr && sqlite3_step(q) == SQLITE_ROW) out.insert(static_cast<uint64_t>(sqlite3_column_int64(q, 0)));
  sqlite3_finalize(q);
  sqlite3_close(db);
  return out;
}

// Stores job "named" (2 ranks, over several segments), deletes the segments `pick` chooses and
// rebuilds the index straight away (no daemon opens the data dir in between: it would write the
// identities it knows into the active segment and hide the loss); every batch left must be
// listed under its process's job and rank with its events, and nothing else.
void ExpectRebuildKeepsNamesWithout(const std::function<std::set<uint64_t>(const std::string& store,
                                                                           const std::vector<fs::path>&)>& pick,
                                    bool with_early_job = false) {
  TempDir dir;
  const std::string store = dir.path() + "/store";
  WithDaemon(dir.path(), "first", [&](const std::string& address) {
    if (with_early_job) Replay(address, "early", /*ranks=*/1, /*steps=*/40);
    Replay(address, "named");
  });
  const std::vector<fs::path> segments = Segments(store);
  ASSERT_GE(segments.size(), 4u) << "the replay did not fill several segments";
  const std::set<uint64_t> lost = pick(store, segments);
  ASSERT_FALSE(lost.empty());
  const std::map<std::string, IndexedProcess> expected = Indexed(store, lost);
  std::set<int> ranks;
  uint64_t events = 0;
  for (const auto& [key, p] : expected) {
    EXPECT_EQ(p.job, "named") << key;
    ranks.insert(p.rank);
    for (const auto& [sequence, n] : p.events_by_sequence) events += n;
  }
  ASSERT_EQ(ranks, (std::set<int>{0, 1}));
  ASSERT_GT(events, 0u);
  for (const fs::path& s : segments) {
    if (lost.count(SegmentId(s)) > 0) fs::remove(s);
  }

  RunResult rebuild = testing::Run({GPUSPYD_BIN, "--rebuild-index", "--data-dir", store});
  ASSERT_EQ(rebuild.exit_code, 0) << rebuild.out << rebuild.err;
  EXPECT_EQ(rebuild.out.find("no identity record"), std::string::npos) << rebuild.out;
  EXPECT_EQ(RebuiltEvents(rebuild.out), events) << rebuild.out;
  EXPECT_EQ(Indexed(store), expected);
  WithDaemon(dir.path(), "rebuilt", [&](const std::string& address) {
    EXPECT_EQ(JobEvents(address, "named"), events);
    EXPECT_EQ(Jobs(address).jobs_size(), 1) << "a job was invented";
  });
}

// The first segment held the only identity record of each process: a rebuild after its loss
// listed the other 44,017 of 69,046 events under job "unknown" (issue 45). Each segment now
// names the processes it holds.
TEST(RebuildAfterDamageE2E, ALostFirstSegmentKeepsEveryProcesssJobAndRank) {
  ExpectRebuildKeepsNamesWithout([](const std::string&, const std::vector<fs::path>& segments) {
    return std::set<uint64_t>{SegmentId(segments[0])};
  });
}

// Near miss: a segment that never held the only identity record; the names stay, as before.
TEST(RebuildAfterDamageE2E, ALostMiddleSegmentKeepsEveryProcesssJobAndRank) {
  ExpectRebuildKeepsNamesWithout([](const std::string&, const std::vector<fs::path>& segments) {
    return std::set<uint64_t>{SegmentId(segments[segments.size() / 2])};
  });
}

// A job whose every segment is lost is gone: neither its name nor an "unknown" stand-in comes
// back, and the job stored after it keeps its own.
TEST(RebuildAfterDamageE2E, AJobWithEverySegmentLostIsNotInvented) {
  ExpectRebuildKeepsNamesWithout(
      [](const std::string& store, const std::vector<fs::path>&) { return SegmentsOfJob(store, "early"); },
      /*with_early_job=*/true);
}

// `kill -9` of gpuspy import mid-send left 2,029,012 of 2,412,000 events stored, and importing
// the file again said "already imported", exit 0.
TEST(InterruptedImportE2E, AnImportKilledMidSendIsAbsentAndImportsAgainWhole) {
  TempDir dir;
  constexpr int kCalls = 400'000;
  const std::string trace = testing::WriteBigRuntimeTrace(dir.path(), kCalls);
  testing::Gpuspyd daemon(StoreDaemon(dir.path(), "d"));
  ASSERT_TRUE(daemon.Start()) << daemon.log();
  const std::string address = daemon.address();
  {
    testing::Process import({GPUSPY_BIN, "--collector", address, "import", "--job", "big", trace},
                            dir.path() + "/import.log");
    uint64_t stored = 0;
    for (int i = 0; i < 60'000 && stored == 0 && import.running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      stored = BatchesStored(address);
    }
    ASSERT_GT(stored, 0u) << "the import ended before it sent anything";
    import.Stop(SIGKILL);
    stored = BatchesStored(address);
    Figure("import killed after " + std::to_string(stored) + " stored batches of ~" +
                    std::to_string(kCalls / 4096 + 1));
    ASSERT_LT(stored, static_cast<uint64_t>(kCalls / 4096)) << "the import finished before it was killed";
  }
  // Nothing of it is listed: not the job, not its events.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(Jobs(address).jobs_size(), 0) << Jobs(address).DebugString();

  RunResult again = testing::Run({GPUSPY_BIN, "--collector", address, "import", "--job", "big", trace});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.err.find("already imported"), std::string::npos) << again.err;
  EXPECT_EQ(JobEvents(address, "big"), static_cast<uint64_t>(kCalls));
  EXPECT_EQ(ReadableEvents(address), static_cast<uint64_t>(kCalls));
}

// A pending import whose stream died is dropped when the collector starts again.
TEST(InterruptedImportE2E, APendingImportIsDroppedOnRestart) {
  TempDir dir;
  const std::string trace = testing::WriteBigRuntimeTrace(dir.path(), 200'000);
  {
    testing::Gpuspyd daemon(StoreDaemon(dir.path(), "a"));
    ASSERT_TRUE(daemon.Start()) << daemon.log();
    testing::Process import({GPUSPY_BIN, "--collector", daemon.address(), "import", "--job", "p", trace},
                            dir.path() + "/import.log");
    uint64_t stored = 0;
    for (int i = 0; i < 60'000 && stored == 0 && import.running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      stored = BatchesStored(daemon.address());
    }
    ASSERT_GT(stored, 0u);
    import.Stop(SIGKILL);
    daemon.Stop(SIGTERM);
  }
  testing::Gpuspyd daemon(StoreDaemon(dir.path(), "b"));
  ASSERT_TRUE(daemon.Start()) << daemon.log();
  EXPECT_NE(daemon.log().find("dropped 1 import(s) left unfinished"), std::string::npos) << daemon.log();
  EXPECT_EQ(Jobs(daemon.address()).jobs_size(), 0);
}

// Concurrent imports of one file, each under its own job: exactly one copy is stored, under the
// job of the import that reports it created; the others say why they stored nothing. Before, 3 of
// 7 trials stored it twice (44,220 events for 40,200) and reported jobs that did not exist.
TEST(ConcurrentImportE2E, OneFileImportedConcurrentlyIsStoredOnce) {
  TempDir dir;
  constexpr int kCalls = 40'000;
  constexpr int kImports = 4;
  constexpr int kTrials = 3;
  const std::string trace = testing::WriteBigRuntimeTrace(dir.path(), kCalls);
  for (int trial = 0; trial < kTrials; ++trial) {
    const std::string trial_dir = dir.path() + "/t" + std::to_string(trial);
    fs::create_directories(trial_dir);
    testing::Gpuspyd daemon(StoreDaemon(trial_dir, "d"));
    ASSERT_TRUE(daemon.Start()) << daemon.log();
    std::vector<RunResult> results(kImports);
    std::vector<std::thread> threads;
    for (int i = 0; i < kImports; ++i) {
      threads.emplace_back([&, i] {
        results[i] = testing::Run({GPUSPY_BIN, "--collector", daemon.address(), "import", "--job",
                                   "c" + std::to_string(i), trace});
      });
    }
    for (std::thread& t : threads) t.join();
    const v1::ListJobsResponse jobs = Jobs(daemon.address());
    ASSERT_EQ(jobs.jobs_size(), 1) << "trial " << trial << ": " << jobs.DebugString();
    EXPECT_EQ(jobs.jobs(0).event_count(), static_cast<uint64_t>(kCalls)) << "trial " << trial;
    EXPECT_EQ(ReadableEvents(daemon.address()), static_cast<uint64_t>(kCalls)) << "trial " << trial;
    // The import that says it created the job is the one whose job exists.
    int created = 0;
    for (int i = 0; i < kImports; ++i) {
      if (results[i].out.find("imported as job 'c" + std::to_string(i) + "'") == std::string::npos) continue;
      ++created;
      EXPECT_EQ(jobs.jobs(0).job_id(), "c" + std::to_string(i)) << "trial " << trial;
    }
    EXPECT_EQ(created, 1) << "trial " << trial;
  }
}

// A segment another tool left world-readable is private again once gpuspyd opens the store.
TEST(StorePermissionsE2E, AWorldReadableSegmentIsMadePrivate) {
  TempDir dir;
  const std::string store = dir.path() + "/store";
  WithDaemon(dir.path(), "first", [&](const std::string& address) { Replay(address, "m"); });
  std::vector<fs::path> segments = Segments(store);
  ASSERT_GE(segments.size(), 2u);
  for (const fs::path& p : {segments.front(), segments.back()}) ASSERT_EQ(chmod(p.c_str(), 0666), 0);
  WithDaemon(dir.path(), "second", [&](const std::string&) {
    for (const fs::path& p : Segments(store)) {
      struct stat st {};
      ASSERT_EQ(stat(p.c_str(), &st), 0);
      EXPECT_EQ(st.st_mode & 0777, 0600u) << p;
    }
  });
}

}  // namespace
}  // namespace gpuspy
