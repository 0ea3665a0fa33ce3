// The control plane of on-demand capture (`gpuspy attach` on a dormant process): the collector's
// StartCapture / StopCapture commands, CUPTI tracing switched on for a window and off after it,
// which parsed events the window lets through (capture_window.h), the drain once it closes, and
// where it stands, reported to the collector. The data pump (event_pipeline.h) hands it commands
// and parsed events and does what it asks through Hooks.
// Runs on the gpuspy-send thread only, like the pump, so it takes no lock; the stats it sets are
// atomics read elsewhere.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

#include "gpuspy/v1/services.pb.h"
#include "inject/core/capture_window.h"
#include "inject/core/core_config.h"
#include "inject/core/pipeline_stats.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::inject {

// How the pipeline switches CUPTI tracing for on-demand windows (CuptiCapture in production).
struct TracingControl {
  std::function<void(const CaptureKinds&)> enable = [](const CaptureKinds&) {};
  std::function<void()> disable = [] {};
  // The CUPTI clock (cuptiGetTimestamp): what event timestamps are in.
  std::function<int64_t()> now_ns;
};

class CaptureController {
 public:
  using Clock = std::chrono::steady_clock;

  // What the controller asks of the pump; all called on the gpuspy-send thread, from the
  // controller's methods.
  struct Hooks {
    // Asks CUPTI to complete its buffers (forced: partly filled ones too).
    std::function<void(bool forced)> flush = [](bool) {};
    // Parses the buffers CUPTI completed, without waiting for more.
    std::function<void()> parse = [] {};
    // Routes what was parsed (back through Route, in dormant mode).
    std::function<void()> route = [] {};
    // Cuts and delivers a batch of what was routed out, if anything was.
    std::function<void()> deliver = [] {};
    // The collector's stream: whether a session is open, and a message on it.
    std::function<bool()> connected = [] { return false; };
    std::function<void(const v1::ClientMessage&)> send = [](const v1::ClientMessage&) {};
  };

  // `tracing.now_ns` must be set. `strings` names the events Route is given (step ranges are
  // found by name); it and `stats` outlive the controller.
  CaptureController(const CoreConfig& config, TracingControl tracing, const StringTable* strings,
                    PipelineStats* stats, Hooks hooks);

  // A command from the collector: StartCapture arms a window (or is refused with a FAILED
  // status), StopCapture ends the one running.
  void Handle(const v1::Command& command);
  // Dormant mode: of `events` (just parsed), appends those the window lets through to `out`;
  // the rest is held by the window or counted as outside it.
  void Route(EventColumns&& events, EventColumns* out);
  // Once per loop of the pump: the drain after a window closes, tracing off when it is done, its
  // status to the collector (on every change, and every kStatusPeriod while it is open).
  void Tend(Clock::time_point now);
  // The process is exiting: a window still open ends now, keeping what was traced, and tracing
  // goes off. True when one was open; say so with ReportExit after the last batch.
  bool CloseForExit();
  void ReportExit();
  // A session (re)opened: tell the collector again where the window stands.
  void Reconnected() { last_status_sent_.Clear(); }

  // A window is armed, capturing or draining: the process must stay connected.
  bool window_active() const { return window_.active(); }
  const CaptureWindow& window() const { return window_; }

 private:
  void StartWindow(const v1::StartCapture& start);
  void SendStatus(const v1::CaptureStatus& status);
  v1::CaptureStatus WindowStatus() const;

  const CoreConfig config_;
  TracingControl tracing_;
  PipelineStats* stats_;
  Hooks hooks_;
  CaptureWindow window_;
  bool tracing_on_ = false;  // switched on for a window
  Clock::time_point drain_deadline_{};
  Clock::time_point last_status_{};
  v1::CaptureStatus last_status_sent_;
};

}  // namespace gpuspy::inject
