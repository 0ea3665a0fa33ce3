// One on-demand capture window (attach) inside the profiled process: decides, event by event,
// what the collector gets, so that exactly the requested steps arrive and nothing before or after.
//
// Tracing is switched on when the window is armed, not at the step boundary: boundaries are only
// known once the NVTX step range's records arrive, and switching CUPTI from the application's
// thread inside an NVTX callback is exactly what a profiler must not do. So events are traced from
// arming on and classified here, on the sender thread:
//   - the window starts at the first step range (NVTX range matching the step pattern) that
//     begins after arming; without one within the start timeout it starts at the arming time;
//   - it ends with the N-th step range's end, after the duration, or at StopCapture;
//   - host-side events (API calls, NVTX, syncs, allocations) belong to it by start time;
//   - GPU-side events (kernels, copies, memsets, graph launches) belong to it when the API call
//     that launched them does (CUPTI correlation ids increase with every call), so the kernels a
//     step launched count even when the GPU runs them after the step's CPU range ended.
// Events that cannot be decided yet are held (about one step's worth); after the window closes,
// held GPU work is awaited for a drain period, then the rest is dropped and counted.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "model/events.h"
#include "model/string_table.h"

namespace re2 {
class RE2;
}

namespace gpuspy::inject {

struct WindowRequest {
  uint64_t capture_id = 0;
  uint32_t steps = 0;            // 0 = no step limit
  int64_t duration_ns = 0;       // 0 = no time limit
  std::string step_pattern;      // RE2, partial match on the NVTX range's message
  int64_t start_timeout_ns = 0;  // how long to wait for a step boundary before starting anyway
};

enum class WindowState { kIdle, kArmed, kCapturing, kDraining, kDone, kStopped };

class CaptureWindow {
 public:
  // Held events beyond this are dropped (counted): a window must never grow the process unbounded.
  static constexpr size_t kMaxHeldEvents = 2'000'000;

  explicit CaptureWindow(const StringTable* strings);
  ~CaptureWindow();
  CaptureWindow(CaptureWindow&&) noexcept;
  CaptureWindow& operator=(CaptureWindow&&) noexcept;

  // Starts waiting for the next step boundary. InvalidArgument for a bad step pattern.
  absl::Status Arm(const WindowRequest& request, int64_t now_ns);
  // Classifies newly traced events: appends those inside the window to `out`, keeps the
  // undecided ones, drops (and counts) the rest. `now_ns` is the CUPTI clock.
  void Feed(EventColumns&& events, int64_t now_ns, EventColumns* out);
  // Ends the window early (detach): at the end of the last complete step (or `now_ns` without
  // step alignment) if it had started, at once if still armed.
  void Stop(int64_t now_ns);
  // The drain period is over: undecided events are dropped; the window is finished.
  void Finish();

  WindowState state() const { return state_; }
  bool active() const {
    return state_ == WindowState::kArmed || state_ == WindowState::kCapturing ||
           state_ == WindowState::kDraining;
  }
  const WindowRequest& request() const { return request_; }
  uint32_t steps_captured() const { return steps_in_window_; }
  bool step_aligned() const { return aligned_; }
  int64_t window_start_ns() const { return window_start_; }
  int64_t window_end_ns() const { return closed_ ? window_end_ : 0; }
  uint64_t events_sent() const { return events_sent_; }
  uint64_t events_outside() const { return events_outside_; }
  size_t held() const { return held_.size(); }

 private:
  void NoteStepRanges(const EventColumns& events);
  void Advance(int64_t now_ns);
  void Release(EventColumns* out);
  void Close(int64_t end_ns);

  const StringTable* strings_;
  std::unique_ptr<re2::RE2> pattern_;
  WindowRequest request_;
  WindowState state_ = WindowState::kIdle;
  bool stopped_early_ = false;
  int64_t armed_at_ = 0;

  // Step ranges seen since arming, ordered by start.
  struct StepRange {
    int64_t start_ns, end_ns;
  };
  std::vector<StepRange> steps_;
  bool aligned_ = false;
  int64_t window_start_ = 0;
  int64_t window_end_ = 0;
  bool closed_ = false;
  // Host events starting before this are decidable (the end of the latest complete step).
  int64_t decided_until_ = 0;
  uint32_t steps_in_window_ = 0;

  // Correlation ids of API calls inside the window: GPU work launched by them is in.
  uint64_t first_correlation_ = 0;  // 0 until the first API call in the window is seen
  uint64_t last_correlation_ = 0;

  EventColumns held_;
  uint64_t events_sent_ = 0;
  uint64_t events_outside_ = 0;
};

}  // namespace gpuspy::inject
