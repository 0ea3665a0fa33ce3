// CaptureManager: attach arms the dormant processes of a job by pushing StartCapture on their
// streams, late or restarted ranks join a running capture, and a capture ends when every process
// is done, stopped, failed or gone.
#include "collector/control/capture_manager.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace gpuspy::collector {
namespace {

class CaptureManagerTest : public ::testing::Test {
 protected:
  void SetUp() override { registry_.set_observer(&manager_); }

  // A process of `job` with an open stream whose pushes are recorded.
  void Connect(uint64_t process_id, const std::string& job, int rank,
               v1::CaptureMode mode = v1::CAPTURE_MODE_DORMANT) {
    v1::ProcessIdentity id;
    id.set_job_id(job);
    id.set_rank(rank);
    id.set_host("node-a");
    id.set_process_key("node-a:" + std::to_string(process_id));
    tokens_[process_id] = registry_.Opened(
        process_id, id, mode,
        [this, process_id](const v1::ServerMessage& m) {
          pushed_[process_id].push_back(m);
          return true;
        },
        1);
  }
  void Report(uint64_t process_id, uint64_t capture_id, v1::CaptureState state) {
    v1::CaptureStatus s;
    s.set_capture_id(capture_id);
    s.set_state(state);
    registry_.CaptureStatus(process_id, s, 2);
  }
  static v1::AttachRequest Attach(const std::string& job, int rank = -1) {
    v1::AttachRequest r;
    r.set_job_id(job);
    r.set_rank(rank);
    r.mutable_capture()->set_steps(3);
    return r;
  }
  v1::Capture Latest(const std::string& job) {
    v1::GetCaptureRequest g;
    g.set_job_id(job);
    return *manager_.Get(g);
  }

  ConnectionRegistry registry_;
  size_t known_ = 0;
  CaptureManager manager_{&registry_, "ProfilerStep#(\\d+)",
                          [this](const std::string&) { return known_; }};
  std::map<uint64_t, uint64_t> tokens_;
  std::map<uint64_t, std::vector<v1::ServerMessage>> pushed_;
};

TEST_F(CaptureManagerTest, AttachArmsTheMatchingDormantProcessesWithTheStepPattern) {
  Connect(1, "train", 0);
  Connect(2, "train", 1);
  Connect(3, "other", 0);
  absl::StatusOr<v1::AttachResponse> r = manager_.Attach(Attach("train"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->processes_armed(), 2u);
  ASSERT_EQ(pushed_[1].size(), 1u);
  const v1::StartCapture& start = pushed_[1][0].command().start_capture();
  EXPECT_EQ(start.capture_id(), r->capture_id());
  EXPECT_EQ(start.steps(), 3u);
  EXPECT_EQ(start.step_pattern(), "ProfilerStep#(\\d+)");
  EXPECT_TRUE(pushed_[3].empty());
  EXPECT_TRUE(Latest("train").active());
}

TEST_F(CaptureManagerTest, ACaptureEndsWhenEveryProcessIsDoneOrGone) {
  Connect(1, "train", 0);
  Connect(2, "train", 1);
  const uint64_t id = manager_.Attach(Attach("train"))->capture_id();
  Report(1, id, v1::CAPTURE_STATE_CAPTURING);
  Report(2, id, v1::CAPTURE_STATE_DONE);
  EXPECT_TRUE(Latest("train").active());
  registry_.Closed(1, tokens_[1]);
  const v1::Capture c = Latest("train");
  EXPECT_FALSE(c.active());
  ASSERT_EQ(c.processes_size(), 2);
  EXPECT_EQ(c.processes(0).status().state(), v1::CAPTURE_STATE_EXITED);
  EXPECT_NE(c.processes(0).status().message().find("disconnected"), std::string::npos);
  EXPECT_EQ(c.processes(1).status().state(), v1::CAPTURE_STATE_DONE);
}

// gpuspy attach --pid names the processes it loaded gpuspy into: the rest of their job (other
// attached processes, ranks that connect later) stays out of the window.
TEST_F(CaptureManagerTest, NamedProcessesAreArmedAndNoOtherOfTheirJob) {
  Connect(1, "train", 0);
  Connect(2, "train", 1);
  v1::AttachRequest r = Attach("train");
  r.add_process_keys("node-a:2");
  absl::StatusOr<v1::AttachResponse> armed = manager_.Attach(r);
  ASSERT_TRUE(armed.ok()) << armed.status();
  EXPECT_EQ(armed->processes_armed(), 1u);
  EXPECT_TRUE(pushed_[1].empty());
  EXPECT_EQ(pushed_[2].size(), 1u);
  Connect(3, "train", 2);
  EXPECT_TRUE(pushed_[3].empty());
  EXPECT_EQ(Latest("train").processes_size(), 1);
}

TEST_F(CaptureManagerTest, ARankThatConnectsDuringACaptureJoinsIt) {
  Connect(1, "train", 0);
  const uint64_t id = manager_.Attach(Attach("train"))->capture_id();
  Connect(2, "train", 1);
  ASSERT_EQ(pushed_[2].size(), 1u);
  EXPECT_EQ(pushed_[2][0].command().start_capture().capture_id(), id);
  EXPECT_EQ(Latest("train").processes_size(), 2);
}

TEST_F(CaptureManagerTest, OneCaptureAtATimePerJobAndDetachStopsIt) {
  Connect(1, "train", 0);
  ASSERT_TRUE(manager_.Attach(Attach("train")).ok());
  EXPECT_EQ(manager_.Attach(Attach("train")).status().code(), absl::StatusCode::kAlreadyExists);
  v1::DetachRequest d;
  d.set_job_id("train");
  absl::StatusOr<v1::DetachResponse> stopped = manager_.Detach(d);
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  EXPECT_EQ(stopped->processes_stopped(), 1u);
  ASSERT_EQ(pushed_[1].size(), 2u);
  EXPECT_TRUE(pushed_[1][1].command().has_stop_capture());
}

TEST_F(CaptureManagerTest, RefusalsSayWhyNothingCanBeArmed) {
  EXPECT_EQ(manager_.Attach(Attach("nojob")).status().code(), absl::StatusCode::kNotFound);
  known_ = 2;  // the store saw the job's processes, all gone now
  EXPECT_EQ(manager_.Attach(Attach("ended")).status().code(),
            absl::StatusCode::kFailedPrecondition);
  Connect(1, "always", 0, v1::CAPTURE_MODE_CONTINUOUS);
  EXPECT_EQ(manager_.Attach(Attach("always")).status().code(),
            absl::StatusCode::kFailedPrecondition);
  Connect(2, "train", 0);
  EXPECT_EQ(manager_.Attach(Attach("train", /*rank=*/5)).status().code(),
            absl::StatusCode::kNotFound);
  v1::AttachRequest no_window = Attach("train");
  no_window.mutable_capture()->set_steps(0);
  EXPECT_EQ(manager_.Attach(no_window).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gpuspy::collector
