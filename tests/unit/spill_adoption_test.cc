// Spill files outliving their process: the owner's lock, claiming an orphan, and delivering it
// under its owner's identity.
#include "client/spill/spill_adoption.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "client/spill/spill_file.h"
#include "tests/support/subprocess.h"

namespace gpuspy::inject {
namespace {

namespace fs = std::filesystem;

v1::ProcessIdentity Identity(const std::string& key, const std::string& job) {
  v1::ProcessIdentity id;
  id.set_process_key(key);
  id.set_job_id(job);
  id.set_host("h");
  id.set_pid(42);
  return id;
}

std::string Batch(uint64_t sequence) {
  v1::EventBatch b;
  b.set_sequence(sequence);
  return b.SerializeAsString();
}

// Leaves a spill file behind the way an ended process does: written, then let go of.
void LeaveOrphan(const std::string& path, const v1::ProcessIdentity& owner,
                 std::initializer_list<uint64_t> sequences) {
  SpillFile spill(path, 1 << 20, owner.SerializeAsString());
  for (uint64_t s : sequences) ASSERT_TRUE(spill.Append(Batch(s)).ok());
}

// What a collector saw, per session.
struct Session {
  std::string process_key;
  std::vector<uint64_t> sequences;
};

struct FakeHub {
  std::map<std::string, uint64_t> stored;  // process key -> highest stored sequence
  std::vector<Session> sessions;
  bool up = true;
  uint64_t fail_at = 0;  // Deliver of this sequence fails (Unavailable) once
};

class HubSink : public BatchSink {
 public:
  explicit HubSink(FakeHub* hub) : hub_(hub) {}
  absl::StatusOr<uint64_t> Connect(const v1::ProcessIdentity& id, absl::Duration) override {
    if (!hub_->up) return absl::UnavailableError("down");
    hub_->sessions.push_back({id.process_key(), {}});
    key_ = id.process_key();
    return hub_->stored[key_];
  }
  absl::Status Deliver(const v1::EventBatch& batch, absl::Duration) override {
    if (batch.sequence() == hub_->fail_at) {
      hub_->fail_at = 0;
      return absl::UnavailableError("gone");
    }
    hub_->sessions.back().sequences.push_back(batch.sequence());
    hub_->stored[key_] = std::max(hub_->stored[key_], batch.sequence());
    return absl::OkStatus();
  }
  void Disconnect() override {}
  bool Connected() const override { return true; }
  absl::Status Send(const v1::ClientMessage&) override { return absl::OkStatus(); }
  std::vector<v1::Command> TakeCommands() override { return {}; }

 private:
  FakeHub* hub_;
  std::string key_;
};

AdoptionResult Adopt(const std::string& dir, FakeHub* hub, const std::string& own = "") {
  AdoptionOptions options;
  options.dir = dir;
  options.own_path = own;
  return AdoptOrphanSpills(options, [hub] { return std::make_unique<HubSink>(hub); });
}

TEST(SpillAdoption, AnOwnerHoldsItsFileWhileItLivesAndLetsGoWhenItEnds) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/p.spill";
  {
    SpillFile spill(path, 1 << 20, "owner");
    ASSERT_TRUE(spill.Append("b1").ok());
    EXPECT_EQ(OrphanSpill::Claim(path).status().code(), absl::StatusCode::kFailedPrecondition);
  }
  absl::StatusOr<std::unique_ptr<OrphanSpill>> orphan = OrphanSpill::Claim(path);
  ASSERT_TRUE(orphan.ok()) << orphan.status();
  EXPECT_EQ((*orphan)->header(), "owner");
  // One claimant at a time; once delivered and removed, it is gone for everyone.
  EXPECT_EQ(OrphanSpill::Claim(path).status().code(), absl::StatusCode::kFailedPrecondition);
  std::vector<std::string> got;
  ASSERT_TRUE((*orphan)->Replay([&](const std::string& b) {
    got.push_back(b);
    return true;
  }).ok());
  EXPECT_EQ(got, std::vector<std::string>{"b1"});
  (*orphan)->Remove();
  EXPECT_EQ(OrphanSpill::Claim(path).status().code(), absl::StatusCode::kNotFound);
}

TEST(SpillAdoption, AFileTheOwnerDeliveredCompletelyIsNotLeftBehind) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/p.spill";
  SpillFile spill(path, 1 << 20, "owner");
  ASSERT_TRUE(spill.Append("b1").ok());
  ASSERT_TRUE(spill.Replay([](const std::string&) { return true; }).ok());
  EXPECT_FALSE(fs::exists(path));
  // Spilling again starts a fresh file with the header.
  ASSERT_TRUE(spill.Append("b2").ok());
  EXPECT_EQ(*spill.ReadAll(), std::vector<std::string>{"b2"});
}

TEST(SpillAdoption, AnOrphanIsDeliveredUnderItsOwnersIdentitySkippingWhatWasStored) {
  testing::TempDir dir;
  const v1::ProcessIdentity owner = Identity("h:100:7", "train");
  const std::string path = SpillPathFor(dir.path(), owner);
  LeaveOrphan(path, owner, {3, 4, 5, 6});
  FakeHub hub;
  hub.stored["h:100:7"] = 4;  // 3 and 4 arrived before the owner ended
  const AdoptionResult r = Adopt(dir.path(), &hub);
  EXPECT_EQ(r.files_delivered, 1);
  EXPECT_EQ(r.files_left, 0);
  EXPECT_EQ(r.batches_delivered, 2u);
  EXPECT_EQ(r.batches_already_stored, 2u);
  ASSERT_EQ(hub.sessions.size(), 1u);
  EXPECT_EQ(hub.sessions[0].process_key, "h:100:7");
  EXPECT_EQ(hub.sessions[0].sequences, (std::vector<uint64_t>{5, 6}));
  EXPECT_FALSE(fs::exists(path));
}

TEST(SpillAdoption, AFailedDeliveryKeepsTheFileForTheNextAdopter) {
  testing::TempDir dir;
  const v1::ProcessIdentity owner = Identity("h:100:7", "train");
  LeaveOrphan(SpillPathFor(dir.path(), owner), owner, {1, 2, 3});
  FakeHub hub;
  hub.fail_at = 2;
  AdoptionResult r = Adopt(dir.path(), &hub);
  EXPECT_EQ(r.files_delivered, 0);
  EXPECT_EQ(r.files_left, 1);
  EXPECT_TRUE(fs::exists(SpillPathFor(dir.path(), owner)));
  hub.up = false;
  EXPECT_EQ(Adopt(dir.path(), &hub).files_left, 1);  // collector away: left alone
  hub.up = true;
  r = Adopt(dir.path(), &hub);
  EXPECT_EQ(r.files_delivered, 1);
  EXPECT_EQ(r.batches_already_stored, 1u);
  EXPECT_EQ(hub.sessions.back().sequences, (std::vector<uint64_t>{2, 3}));
  EXPECT_FALSE(fs::exists(SpillPathFor(dir.path(), owner)));
}

TEST(SpillAdoption, LiveOwnersOwnFileAndForeignFilesAreLeftAlone) {
  testing::TempDir dir;
  const v1::ProcessIdentity live = Identity("h:1:1", "a");
  SpillFile live_spill(SpillPathFor(dir.path(), live), 1 << 20, live.SerializeAsString());
  ASSERT_TRUE(live_spill.Append(Batch(1)).ok());
  const v1::ProcessIdentity self = Identity("h:2:2", "a");
  LeaveOrphan(SpillPathFor(dir.path(), self), self, {1});
  std::ofstream(dir.path() + "/junk.spill") << "not a spill file";
  std::ofstream(dir.path() + "/notes.txt") << "unrelated";
  {
    SpillFile nameless(dir.path() + "/nameless.spill", 1 << 20, "\xff not an identity");
    ASSERT_TRUE(nameless.Append(Batch(1)).ok());
  }
  FakeHub hub;
  const AdoptionResult r = Adopt(dir.path(), &hub, SpillPathFor(dir.path(), self));
  EXPECT_EQ(r.files_delivered, 0);
  EXPECT_EQ(r.files_left, 2);  // the foreign one and the one naming no process, reported ...
  EXPECT_TRUE(hub.sessions.empty());
  EXPECT_FALSE(fs::exists(dir.path() + "/junk.spill"));  // ... and moved aside, kept
  EXPECT_TRUE(fs::exists(dir.path() + "/junk.spill.unreadable"));
  EXPECT_TRUE(fs::exists(dir.path() + "/nameless.spill.unreadable"));
  EXPECT_TRUE(fs::exists(dir.path() + "/notes.txt"));
  EXPECT_EQ(*live_spill.ReadAll(), std::vector<std::string>{Batch(1)});
  EXPECT_EQ(Adopt(dir.path(), &hub, SpillPathFor(dir.path(), self)).files_left, 0);
}

TEST(SpillAdoption, AnOwnerThatEndsMidReplaySendsTheRestAgainAndNothingIsLost) {
  testing::TempDir dir;
  const v1::ProcessIdentity owner = Identity("h:9:9", "j");
  const std::string path = SpillPathFor(dir.path(), owner);
  FakeHub hub;
  {
    SpillFile spill(path, 1 << 20, owner.SerializeAsString());
    for (uint64_t s = 1; s <= 5; ++s) ASSERT_TRUE(spill.Append(Batch(s)).ok());
    HubSink sink(&hub);
    ASSERT_TRUE(sink.Connect(owner, absl::Seconds(1)).ok());
    ASSERT_TRUE(spill.Replay([&](const std::string& bytes) {
      v1::EventBatch b;
      b.ParseFromString(bytes);
      return b.sequence() <= 2 && sink.Deliver(b, absl::Seconds(1)).ok();
    }).ok());
  }  // ends with 3..5 spilled
  const AdoptionResult r = Adopt(dir.path(), &hub);
  EXPECT_EQ(r.files_delivered, 1);
  EXPECT_EQ(r.batches_already_stored, 2u);
  EXPECT_EQ(hub.sessions.back().sequences, (std::vector<uint64_t>{3, 4, 5}));
}

TEST(SpillAdoption, AnOwnerThatEndedBeforeSpillingABatchLeavesNothingToDeliver) {
  testing::TempDir dir;
  const v1::ProcessIdentity owner = Identity("h:8:8", "j");
  const std::string path = SpillPathFor(dir.path(), owner);
  {
    SpillFile spill(path, 1 << 20, owner.SerializeAsString());
    ASSERT_TRUE(spill.Append("b").ok());
    // As after a failed first write (disk full): cut back to the header.
    fs::resize_file(path, fs::file_size(path) - 9);
  }
  FakeHub hub;
  hub.up = false;  // not even asked
  const AdoptionResult r = Adopt(dir.path(), &hub);
  EXPECT_EQ(r.files_delivered, 1);
  EXPECT_FALSE(fs::exists(path));
}

TEST(SpillAdoption, AForkedChildDoesNotKeepItsParentsFileClaimed) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/p.spill";
  int ready[2], done[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(done), 0);
  const pid_t parent = fork();
  if (parent == 0) {
    // The "parent" process: spills, forks a long-lived child, and ends.
    SpillFile spill(path, 1 << 20, "owner");
    if (!spill.Append("b1").ok()) _exit(1);
    const pid_t child = fork();
    if (child == 0) {
      close(done[1]);
      spill.AbandonAfterFork();  // what the core's fork handler does
      (void)!write(ready[1], "x", 1);
      char c;
      (void)!read(done[0], &c, 1);  // lives on until the test is done
      _exit(0);
    }
    _exit(0);  // ends without removing its spill
  }
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(parent, &status, 0), parent);
  ASSERT_EQ(WEXITSTATUS(status), 0);
  // The parent is gone, its child is not: the file is an orphan all the same.
  absl::StatusOr<std::unique_ptr<OrphanSpill>> orphan = OrphanSpill::Claim(path);
  EXPECT_TRUE(orphan.ok()) << orphan.status();
  (void)!write(done[1], "x", 1);
}

TEST(SpillAdoption, FileNamesTellProcessesApartEvenWhenAPidIsReused) {
  const std::string a = SpillPathFor("/d", Identity("node-1:4242:1000", "j"));
  const std::string b = SpillPathFor("/d", Identity("node-1:4242:2000", "j"));
  EXPECT_NE(a, b);
  EXPECT_EQ(a, "/d/node-1-4242-1000.spill");
  EXPECT_EQ(SpillPathFor("/d", Identity("../x/y:1:2", "j")), "/d/.._x_y-1-2.spill");
}

TEST(SpillAdoption, NothingIsAdoptedFromADirectoryAnotherUserControls) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to hand the directory to another user";
  testing::TempDir dir;
  const std::string theirs = dir.path() + "/theirs";
  ASSERT_EQ(mkdir(theirs.c_str(), 0777), 0);
  const v1::ProcessIdentity owner = Identity("h:3:3", "j");
  LeaveOrphan(SpillPathFor(theirs, owner), owner, {1});
  ASSERT_EQ(chown(theirs.c_str(), 65534, 65534), 0);
  FakeHub hub;
  const AdoptionResult r = Adopt(theirs, &hub);
  EXPECT_EQ(r.files_delivered, 0);
  EXPECT_TRUE(hub.sessions.empty());
  EXPECT_NE(r.last_problem.find(theirs), std::string::npos) << r.last_problem;
  EXPECT_TRUE(fs::exists(SpillPathFor(theirs, owner)));
}

TEST(SpillAdoption, InBackgroundItStopsWhenAskedAndReportsTotals) {
  testing::TempDir dir;
  const v1::ProcessIdentity owner = Identity("h:5:5", "j");
  LeaveOrphan(SpillPathFor(dir.path(), owner), owner, {1, 2});
  FakeHub hub;
  AdoptionOptions options;
  options.dir = dir.path();
  BackgroundAdoption adoption(options, [&hub] { return std::make_unique<HubSink>(&hub); });
  adoption.Start();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (adoption.totals().files_delivered == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  adoption.Stop(std::chrono::seconds(10));
  EXPECT_EQ(adoption.totals().files_delivered, 1);
  EXPECT_EQ(adoption.totals().batches_delivered, 2u);
  adoption.Start();  // stopped: no new pass
  EXPECT_EQ(hub.sessions.size(), 1u);
}

}  // namespace
}  // namespace gpuspy::inject
