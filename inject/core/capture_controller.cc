#include "inject/core/capture_controller.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/log/log_line.h"

namespace gpuspy::inject {
namespace {

// After a window closes, GPU work launched inside it may still be running or sitting in CUPTI's
// buffers: wait this long (at least) before dropping what is undecided.
constexpr std::chrono::milliseconds kMinDrain{300};
// Without an NVTX step boundary within this time, an attach window starts at once.
constexpr int64_t kDefaultStartTimeoutNs = 10'000'000'000;
// Progress reports while a window is open (besides one on every state change).
constexpr std::chrono::milliseconds kStatusPeriod{500};

v1::CaptureState ToProto(WindowState s) {
  switch (s) {
    case WindowState::kArmed: return v1::CAPTURE_STATE_ARMED;
    case WindowState::kCapturing: return v1::CAPTURE_STATE_CAPTURING;
    case WindowState::kDraining: return v1::CAPTURE_STATE_DRAINING;
    case WindowState::kDone: return v1::CAPTURE_STATE_DONE;
    case WindowState::kStopped: return v1::CAPTURE_STATE_STOPPED;
    case WindowState::kIdle: break;
  }
  return v1::CAPTURE_STATE_UNSPECIFIED;
}

}  // namespace

CaptureController::CaptureController(const CoreConfig& config, TracingControl tracing,
                                     const StringTable* strings, PipelineStats* stats, Hooks hooks)
    : config_(config),
      tracing_(std::move(tracing)),
      stats_(stats),
      hooks_(std::move(hooks)),
      window_(strings) {}

void CaptureController::Handle(const v1::Command& command) {
  if (command.has_start_capture()) {
    StartWindow(command.start_capture());
  } else if (command.has_stop_capture()) {
    const uint64_t id = command.stop_capture().capture_id();
    if (window_.active() && (id == 0 || id == window_.request().capture_id)) {
      Log(LogLevel::kInfo, "capture %llu: stopped by the collector",
          static_cast<unsigned long long>(window_.request().capture_id));
      window_.Stop(tracing_.now_ns());
    }
  }
}

void CaptureController::StartWindow(const v1::StartCapture& start) {
  v1::CaptureStatus refusal;
  refusal.set_capture_id(start.capture_id());
  refusal.set_state(v1::CAPTURE_STATE_FAILED);
  if (config_.mode == CaptureMode::kAlways) {
    refusal.set_message("continuous mode (GPUSPY_MODE=always): this process is traced already");
    SendStatus(refusal);
    return;
  }
  if (window_.active()) {
    if (window_.request().capture_id == start.capture_id()) return;  // repeated after reconnect
    refusal.set_message(absl::StrCat("capture ", window_.request().capture_id,
                                     " is still running in this process"));
    SendStatus(refusal);
    return;
  }
  WindowRequest request;
  request.capture_id = start.capture_id();
  request.steps = start.steps();
  request.duration_ns = start.duration_ns();
  request.step_pattern = start.step_pattern().empty() ? "ProfilerStep#" : start.step_pattern();
  request.start_timeout_ns =
      start.start_timeout_ns() > 0 ? start.start_timeout_ns() : kDefaultStartTimeoutNs;
  std::string warnings;
  CaptureKinds kinds = config_.kinds;
  if (start.kinds_size() > 0) ParseKinds(absl::StrJoin(start.kinds(), ","), &kinds, &warnings);
  if (absl::Status st = window_.Arm(request, tracing_.now_ns()); !st.ok()) {
    refusal.set_message(std::string(st.message()));
    SendStatus(refusal);
    return;
  }
  // Step boundaries are NVTX ranges: traced even when the kinds asked for leave NVTX out.
  kinds.nvtx = true;
  tracing_.enable(kinds);
  tracing_on_ = true;
  stats_->captures_started.fetch_add(1);
  last_status_sent_.Clear();
  Log(LogLevel::kInfo, "capture %llu: armed (%u steps, %lld ms)%s%s",
      static_cast<unsigned long long>(request.capture_id), request.steps,
      static_cast<long long>(request.duration_ns / 1'000'000), warnings.empty() ? "" : "; ",
      warnings.c_str());
}

void CaptureController::Route(EventColumns&& events, EventColumns* out) {
  if (window_.active()) {
    window_.Feed(std::move(events), tracing_.now_ns(), out);
    stats_->events_outside_window.store(window_.events_outside());
  } else if (!events.empty()) {
    // Records CUPTI completed after a window's tracing was switched off.
    stats_->events_outside_window.fetch_add(events.size());
  }
}

v1::CaptureStatus CaptureController::WindowStatus() const {
  v1::CaptureStatus s;
  s.set_capture_id(window_.request().capture_id);
  s.set_state(ToProto(window_.state()));
  s.set_steps_captured(window_.steps_captured());
  s.set_step_aligned(window_.step_aligned());
  s.set_window_start_ns(window_.window_start_ns());
  s.set_window_end_ns(window_.window_end_ns());
  s.set_events_sent(window_.events_sent());
  s.set_events_outside_window(window_.events_outside());
  return s;
}

void CaptureController::SendStatus(const v1::CaptureStatus& status) {
  if (!hooks_.connected()) return;  // the next status after reconnecting says it all
  v1::ClientMessage m;
  *m.mutable_capture_status() = status;
  hooks_.send(m);
}

void CaptureController::Tend(Clock::time_point now) {
  if (window_.request().capture_id == 0) return;  // never armed
  if (window_.state() == WindowState::kDraining) {
    if (drain_deadline_ == Clock::time_point{}) {
      drain_deadline_ =
          now + std::max(kMinDrain, 2 * std::chrono::milliseconds(config_.flush_period_ms));
      hooks_.flush(true);
    } else if (now >= drain_deadline_) {
      // Last call for the window's GPU work, then tracing goes back off.
      hooks_.flush(true);
      hooks_.parse();
      hooks_.route();
      window_.Finish();
      drain_deadline_ = {};
      // Deliver the window's last events before saying DONE: whoever waits for DONE (gpuspy
      // attach) reads the reports right after.
      hooks_.deliver();
      Log(LogLevel::kInfo, "capture %llu: done, %u steps, %llu events sent",
          static_cast<unsigned long long>(window_.request().capture_id), window_.steps_captured(),
          static_cast<unsigned long long>(window_.events_sent()));
    }
  }
  if (tracing_on_ && !window_.active()) {
    tracing_.disable();
    tracing_on_ = false;
  }
  const v1::CaptureStatus status = WindowStatus();
  const bool changed = status.state() != last_status_sent_.state() ||
                       status.steps_captured() != last_status_sent_.steps_captured() ||
                       status.window_start_ns() != last_status_sent_.window_start_ns();
  if (changed || (window_.active() && now - last_status_ >= kStatusPeriod)) {
    if (!window_.active() && last_status_sent_.state() == status.state()) return;
    SendStatus(status);
    if (hooks_.connected()) last_status_sent_ = status;
    last_status_ = now;
  }
}

bool CaptureController::CloseForExit() {
  if (!window_.active()) return false;
  // Keep what was traced up to now.
  window_.Stop(tracing_.now_ns());
  hooks_.route();
  window_.Finish();
  tracing_.disable();
  tracing_on_ = false;
  return true;
}

void CaptureController::ReportExit() {
  v1::CaptureStatus status = WindowStatus();
  status.set_message("the process is exiting");
  SendStatus(status);
}

}  // namespace gpuspy::inject
