// CaptureController: the on-demand capture control plane, driven synchronously as the pump drives
// it on its thread. Commands arm and stop windows (or are refused with a FAILED status), tracing
// goes on with NVTX and off when the window is done, the window's GPU work is drained and
// delivered before DONE is said, statuses go out on change (again after a reconnect), and an exit
// inside a window keeps what was traced.
#include "inject/core/capture_controller.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace gpuspy::inject {
namespace {

using Clock = CaptureController::Clock;
using std::chrono::milliseconds;

constexpr int64_t kStepNs = 1'000'000;

class CaptureControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_.mode = CaptureMode::kOnDemand;
    config_.flush_period_ms = 10;
  }

  void Make() {
    TracingControl tracing;
    tracing.enable = [this](const CaptureKinds& k) { enabled_.push_back(k); };
    tracing.disable = [this] { ++disables_; };
    tracing.now_ns = [this] { return now_ns_; };
    CaptureController::Hooks hooks;
    hooks.flush = [this](bool forced) { flushes_.push_back(forced); };
    hooks.parse = [this] { ++parses_; };
    // As the pump routes: what was parsed goes through the controller, then is gone.
    hooks.route = [this] {
      controller_->Route(std::move(pending_), &outgoing_);
      pending_.clear();
    };
    hooks.deliver = [this] {
      if (outgoing_.empty()) return;
      delivered_.push_back(outgoing_.size());
      statuses_at_delivery_.push_back(statuses_.size());
      outgoing_.clear();
    };
    hooks.connected = [this] { return connected_; };
    hooks.send = [this](const v1::ClientMessage& m) {
      ASSERT_TRUE(m.has_capture_status());
      statuses_.push_back(m.capture_status());
    };
    controller_ = std::make_unique<CaptureController>(config_, std::move(tracing), &strings_,
                                                      &stats_, std::move(hooks));
  }

  static v1::Command Start(uint64_t id, uint32_t steps = 0) {
    v1::Command c;
    c.mutable_start_capture()->set_capture_id(id);
    c.mutable_start_capture()->set_steps(steps);
    return c;
  }
  static v1::Command Stop(uint64_t id) {
    v1::Command c;
    c.mutable_stop_capture()->set_capture_id(id);
    return c;
  }

  // Step k as a training loop traces it: its NVTX range and one launch with its kernel.
  EventColumns Step(int k) {
    EventColumns e;
    const int64_t t0 = k * kStepNs;
    e.nvtx_ranges.push_back({t0, t0 + kStepNs - 10, 0, strings_.Intern("ProfilerStep#" + std::to_string(k)), 1, 0});
    const uint64_t corr = static_cast<uint64_t>(k) * 100 + 1;
    e.apis.push_back({t0 + 100, t0 + 5'000, corr, ApiDomain::kRuntime, 211, strings_.Intern("cudaLaunchKernel"), 1, 0});
    e.kernels.push_back({t0 + 300'000, t0 + 350'000, corr, strings_.Intern("gemm"), {}, {}, 0});
    return e;
  }
  // Step k's events parsed and routed by the pump, "now" just after the step.
  void Traced(int k) {
    now_ns_ = (k + 1) * kStepNs;
    controller_->Route(Step(k), &outgoing_);
  }

  v1::CaptureState LastState() const {
    return statuses_.empty() ? v1::CAPTURE_STATE_UNSPECIFIED : statuses_.back().state();
  }

  CoreConfig config_;
  StringTable strings_;
  PipelineStats stats_;
  std::unique_ptr<CaptureController> controller_;
  int64_t now_ns_ = 0;
  Clock::time_point now_ = Clock::now();
  std::vector<CaptureKinds> enabled_;
  int disables_ = 0;
  std::vector<bool> flushes_;
  int parses_ = 0;
  EventColumns pending_;
  EventColumns outgoing_;
  std::vector<size_t> delivered_;             // events per delivered batch
  std::vector<size_t> statuses_at_delivery_;  // statuses sent before each delivery
  bool connected_ = true;
  std::vector<v1::CaptureStatus> statuses_;
};

TEST_F(CaptureControllerTest, ContinuousProcessRefusesAnAttachWindow) {
  config_.mode = CaptureMode::kAlways;
  Make();
  controller_->Handle(Start(7, 5));
  ASSERT_EQ(statuses_.size(), 1u);
  EXPECT_EQ(statuses_[0].capture_id(), 7u);
  EXPECT_EQ(statuses_[0].state(), v1::CAPTURE_STATE_FAILED);
  EXPECT_NE(statuses_[0].message().find("continuous"), std::string::npos);
  EXPECT_TRUE(enabled_.empty());
  EXPECT_FALSE(controller_->window_active());
  EXPECT_EQ(stats_.captures_started.load(), 0u);
}

TEST_F(CaptureControllerTest, ArmingTracesTheKindsAskedForPlusNvtxAndSaysArmed) {
  config_.kinds.nvtx = false;
  Make();
  v1::Command start = Start(42, 5);
  start.mutable_start_capture()->add_kinds("kernel");
  controller_->Handle(start);
  ASSERT_EQ(enabled_.size(), 1u);
  EXPECT_TRUE(enabled_[0].kernel);
  EXPECT_FALSE(enabled_[0].memcpy);
  EXPECT_TRUE(enabled_[0].nvtx) << "step boundaries need NVTX even when not asked for";
  EXPECT_TRUE(controller_->window_active());
  EXPECT_EQ(stats_.captures_started.load(), 1u);
  EXPECT_EQ(controller_->window().request().step_pattern, "ProfilerStep#");

  controller_->Tend(now_);
  ASSERT_EQ(statuses_.size(), 1u);
  EXPECT_EQ(statuses_[0].capture_id(), 42u);
  EXPECT_EQ(statuses_[0].state(), v1::CAPTURE_STATE_ARMED);
}

TEST_F(CaptureControllerTest, ASecondWindowIsRefusedAndARepeatedStartIgnored) {
  Make();
  controller_->Handle(Start(42, 5));
  controller_->Handle(Start(42, 5));  // the collector repeats it after a reconnect
  EXPECT_TRUE(statuses_.empty());
  EXPECT_EQ(enabled_.size(), 1u);
  controller_->Handle(Start(43, 5));
  ASSERT_EQ(statuses_.size(), 1u);
  EXPECT_EQ(statuses_[0].capture_id(), 43u);
  EXPECT_EQ(statuses_[0].state(), v1::CAPTURE_STATE_FAILED);
  EXPECT_NE(statuses_[0].message().find("capture 42 is still running"), std::string::npos);
  EXPECT_EQ(controller_->window().request().capture_id, 42u);
  EXPECT_EQ(stats_.captures_started.load(), 1u);
}

TEST_F(CaptureControllerTest, ABadStepPatternIsRefusedWithoutTracing) {
  Make();
  v1::Command start = Start(9, 2);
  start.mutable_start_capture()->set_step_pattern("ProfilerStep#(");
  controller_->Handle(start);
  ASSERT_EQ(statuses_.size(), 1u);
  EXPECT_EQ(statuses_[0].state(), v1::CAPTURE_STATE_FAILED);
  EXPECT_FALSE(statuses_[0].message().empty());
  EXPECT_TRUE(enabled_.empty());
  EXPECT_FALSE(controller_->window_active());
}

TEST_F(CaptureControllerTest, StopEndsOnlyTheRunningCaptureAndTracingGoesOff) {
  Make();
  controller_->Handle(Start(42, 5));
  controller_->Tend(now_);
  controller_->Handle(Stop(41));  // not this one
  EXPECT_TRUE(controller_->window_active());
  controller_->Handle(Stop(42));
  EXPECT_FALSE(controller_->window_active()) << "stopped while armed: over at once";
  EXPECT_EQ(disables_, 0) << "tracing is switched off by Tend, on the pump's loop";
  controller_->Tend(now_);
  EXPECT_EQ(disables_, 1);
  EXPECT_EQ(LastState(), v1::CAPTURE_STATE_STOPPED);
  EXPECT_TRUE(delivered_.empty()) << "stopped while armed: nothing to send";
  // Done: nothing more is said, and tracing is not switched off twice.
  const size_t said = statuses_.size();
  controller_->Tend(now_ + milliseconds(2000));
  EXPECT_EQ(statuses_.size(), said);
  EXPECT_EQ(disables_, 1);
  // Stop 0 means whichever capture runs.
  controller_->Handle(Start(43, 5));
  controller_->Handle(Stop(0));
  EXPECT_FALSE(controller_->window_active());
}

TEST_F(CaptureControllerTest, AFinishedWindowIsDrainedAndDeliveredBeforeDone) {
  Make();
  now_ns_ = kStepNs / 2;  // armed inside step 0: the window opens at step 1
  controller_->Handle(Start(42, 2));
  Traced(0);
  controller_->Tend(now_);
  EXPECT_EQ(LastState(), v1::CAPTURE_STATE_ARMED);
  Traced(1);
  Traced(2);
  Traced(3);
  ASSERT_EQ(controller_->window().state(), WindowState::kDraining);

  // The drain starts: CUPTI is asked for its buffers, and the window waits for the GPU work.
  controller_->Tend(now_);
  EXPECT_EQ(flushes_, std::vector<bool>{true});
  EXPECT_EQ(LastState(), v1::CAPTURE_STATE_DRAINING);
  EXPECT_EQ(statuses_.back().steps_captured(), 2u);
  controller_->Tend(now_ + milliseconds(100));
  EXPECT_EQ(flushes_.size(), 1u) << "the drain lasts at least 300 ms";
  EXPECT_EQ(disables_, 0);

  // Deadline: the last buffers are parsed and routed, the window's events delivered, then DONE.
  controller_->Tend(now_ + milliseconds(300));
  EXPECT_EQ(flushes_, (std::vector<bool>{true, true}));
  EXPECT_EQ(parses_, 1);
  ASSERT_EQ(delivered_.size(), 1u);
  EXPECT_EQ(delivered_[0], 2u * 3u) << "steps 1 and 2: range, launch and kernel each";
  EXPECT_EQ(LastState(), v1::CAPTURE_STATE_DONE);
  EXPECT_EQ(statuses_at_delivery_[0], statuses_.size() - 1) << "DONE is said after the delivery";
  EXPECT_EQ(statuses_.back().events_sent(), 6u);
  EXPECT_EQ(disables_, 1);
  EXPECT_FALSE(controller_->window_active());
}

TEST_F(CaptureControllerTest, StatusesGoOutOnChangeAndPeriodicallyAndAgainAfterReconnect) {
  Make();
  controller_->Handle(Start(42, 5));
  controller_->Tend(now_);
  ASSERT_EQ(statuses_.size(), 1u);
  controller_->Tend(now_ + milliseconds(100));
  EXPECT_EQ(statuses_.size(), 1u) << "unchanged within the period";
  controller_->Tend(now_ + milliseconds(500));
  EXPECT_EQ(statuses_.size(), 2u) << "progress every 500 ms while open";

  // Away: nothing is sent, nor taken as said; back: the collector hears where the window stands.
  connected_ = false;
  Traced(1);  // capturing now
  controller_->Tend(now_ + milliseconds(600));
  EXPECT_EQ(statuses_.size(), 2u);
  connected_ = true;
  controller_->Tend(now_ + milliseconds(700));
  ASSERT_EQ(statuses_.size(), 3u);
  EXPECT_EQ(statuses_.back().state(), v1::CAPTURE_STATE_CAPTURING);
  controller_->Reconnected();
  controller_->Tend(now_ + milliseconds(750));
  EXPECT_EQ(statuses_.size(), 4u) << "a new session is told again";
}

TEST_F(CaptureControllerTest, AnExitInsideAWindowKeepsWhatWasTracedAndSaysSo) {
  Make();
  EXPECT_FALSE(controller_->CloseForExit()) << "no window: nothing to close";
  now_ns_ = kStepNs / 2;
  controller_->Handle(Start(42, 10));
  Traced(0);
  Traced(1);
  Traced(2);
  // Step 3 traced, but the GPU ran its kernel late: parsed, not yet routed when the exit comes.
  EventColumns step3 = Step(3);
  pending_.kernels = step3.kernels;
  step3.kernels.clear();
  now_ns_ = 4 * kStepNs;
  controller_->Route(std::move(step3), &outgoing_);
  now_ns_ = 4 * kStepNs + kStepNs / 2;  // inside step 4
  ASSERT_TRUE(controller_->CloseForExit());
  EXPECT_EQ(disables_, 1);
  EXPECT_FALSE(controller_->window_active());
  EXPECT_EQ(controller_->window().steps_captured(), 3u) << "steps 1 to 3, the last complete";
  EXPECT_EQ(outgoing_.nvtx_ranges.size(), 3u);
  ASSERT_EQ(outgoing_.kernels.size(), 3u) << "step 3's late kernel is routed in after the stop";
  EXPECT_EQ(outgoing_.kernels.back().correlation_id, 301u);
  controller_->ReportExit();
  ASSERT_FALSE(statuses_.empty());
  EXPECT_EQ(statuses_.back().message(), "the process is exiting");
  EXPECT_EQ(statuses_.back().capture_id(), 42u);
}

TEST_F(CaptureControllerTest, EventsTracedOutsideAWindowAreCountedNotSent) {
  Make();
  controller_->Route(Step(0), &outgoing_);
  EXPECT_TRUE(outgoing_.empty());
  EXPECT_EQ(stats_.events_outside_window.load(), 3u);
}

}  // namespace
}  // namespace gpuspy::inject
