#include "inject/core/capture_window.h"

#include <algorithm>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "re2/re2.h"

namespace gpuspy::inject {
namespace {

constexpr int64_t kForever = std::numeric_limits<int64_t>::max();

template <typename E>
int64_t StartOf(const E& e) {
  if constexpr (requires { e.start_ns; }) {
    return e.start_ns;
  } else {
    return e.timestamp_ns;
  }
}

}  // namespace

CaptureWindow::CaptureWindow(const StringTable* strings) : strings_(strings) {}
CaptureWindow::~CaptureWindow() = default;
CaptureWindow::CaptureWindow(CaptureWindow&&) noexcept = default;
CaptureWindow& CaptureWindow::operator=(CaptureWindow&&) noexcept = default;

absl::Status CaptureWindow::Arm(const WindowRequest& request, int64_t now_ns) {
  auto pattern = std::make_unique<re2::RE2>(request.step_pattern, re2::RE2::Quiet);
  if (!pattern->ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("step pattern '", request.step_pattern, "': ", pattern->error()));
  }
  *this = CaptureWindow(strings_);
  pattern_ = std::move(pattern);
  request_ = request;
  armed_at_ = now_ns;
  state_ = WindowState::kArmed;
  return absl::OkStatus();
}

void CaptureWindow::NoteStepRanges(const EventColumns& events) {
  if (state_ != WindowState::kArmed && state_ != WindowState::kCapturing) return;
  const int64_t earliest = state_ == WindowState::kArmed ? armed_at_ : window_start_;
  for (const NvtxRangeEvent& r : events.nvtx_ranges) {
    // A step that began before arming was only partly traced: the window starts after it.
    if (r.start_ns < earliest) continue;
    if (!re2::RE2::PartialMatch(strings_->Get(r.message), *pattern_)) continue;
    StepRange s{r.start_ns, r.end_ns};
    auto at = std::upper_bound(steps_.begin(), steps_.end(), s,
                               [](const StepRange& a, const StepRange& b) { return a.start_ns < b.start_ns; });
    steps_.insert(at, s);
  }
}

void CaptureWindow::Close(int64_t end_ns) {
  window_end_ = std::max(end_ns, window_start_);
  closed_ = true;
  decided_until_ = kForever;
  state_ = WindowState::kDraining;
  if (aligned_) {
    steps_in_window_ = static_cast<uint32_t>(std::count_if(
        steps_.begin(), steps_.end(), [&](const StepRange& s) { return s.end_ns <= window_end_; }));
  }
}

void CaptureWindow::Advance(int64_t now_ns) {
  if (state_ == WindowState::kArmed) {
    if (!steps_.empty()) {
      window_start_ = steps_.front().start_ns;
      aligned_ = true;
      state_ = WindowState::kCapturing;
    } else if (now_ns - armed_at_ >= request_.start_timeout_ns) {
      // No step boundary to align to (the program marks no NVTX steps): start now.
      window_start_ = armed_at_;
      aligned_ = false;
      state_ = WindowState::kCapturing;
    }
  }
  if (state_ != WindowState::kCapturing) return;
  if (aligned_) {
    steps_in_window_ = static_cast<uint32_t>(steps_.size());
    decided_until_ = steps_.empty() ? window_start_ : steps_.back().end_ns;
    if (request_.steps > 0 && steps_.size() >= request_.steps) {
      Close(steps_[request_.steps - 1].end_ns);
      return;
    }
  } else {
    // Every event traced so far started before now, and the window ends no earlier than now.
    decided_until_ = now_ns;
  }
  if (request_.duration_ns > 0 && now_ns >= window_start_ + request_.duration_ns) {
    Close(window_start_ + request_.duration_ns);
  }
}

void CaptureWindow::Release(EventColumns* out) {
  // Host side, by start time. API calls first: they define which GPU work is in.
  auto by_time = [&](auto& held, auto& sent) {
    size_t keep = 0;
    for (auto& e : held) {
      const int64_t t = StartOf(e);
      if (t < window_start_ || (closed_ && t >= window_end_)) {
        ++events_outside_;
      } else if (t >= decided_until_) {
        held[keep++] = e;
      } else {
        if constexpr (std::is_same_v<std::decay_t<decltype(e)>, ApiEvent>) {
          if (e.correlation_id != 0) {
            if (first_correlation_ == 0 || e.correlation_id < first_correlation_) {
              first_correlation_ = e.correlation_id;
            }
            last_correlation_ = std::max(last_correlation_, e.correlation_id);
          }
        }
        sent.push_back(e);
        ++events_sent_;
      }
    }
    held.resize(keep);
  };
  // GPU side, by the launching call's correlation id.
  auto by_launch = [&](auto& held, auto& sent) {
    size_t keep = 0;
    for (auto& e : held) {
      const uint64_t c = e.correlation_id;
      if (c == 0 || (first_correlation_ != 0 && c < first_correlation_)) {
        ++events_outside_;
      } else if (first_correlation_ != 0 && c <= last_correlation_) {
        sent.push_back(e);
        ++events_sent_;
      } else {
        held[keep++] = e;  // its launch has not been classified yet
      }
    }
    held.resize(keep);
  };
  by_time(held_.apis, out->apis);
  by_time(held_.nvtx_ranges, out->nvtx_ranges);
  by_time(held_.nvtx_marks, out->nvtx_marks);
  by_time(held_.syncs, out->syncs);
  by_time(held_.memory, out->memory);
  by_time(held_.overheads, out->overheads);
  by_time(held_.memory_pools, out->memory_pools);
  by_time(held_.counter_samples, out->counter_samples);
  by_launch(held_.kernels, out->kernels);
  by_launch(held_.memcpys, out->memcpys);
  by_launch(held_.memsets, out->memsets);
  by_launch(held_.graph_launches, out->graph_launches);
  by_launch(held_.external_correlations, out->external_correlations);
}

void CaptureWindow::Feed(EventColumns&& events, int64_t now_ns, EventColumns* out) {
  if (!active()) {
    events_outside_ += events.size();
    return;
  }
  NoteStepRanges(events);
  held_.Append(events);
  Advance(now_ns);
  if (state_ == WindowState::kCapturing || state_ == WindowState::kDraining) Release(out);
  if (held_.size() > kMaxHeldEvents) {
    events_outside_ += held_.size();
    held_.clear();
  }
}

void CaptureWindow::Stop(int64_t now_ns) {
  stopped_early_ = true;
  if (state_ == WindowState::kArmed) {
    events_outside_ += held_.size();
    held_.clear();
    state_ = WindowState::kStopped;
  } else if (state_ == WindowState::kCapturing) {
    // Aligned windows end with the last complete step: a step cut in half would be reported
    // as a short, misleading step.
    Close(aligned_ && !steps_.empty() ? steps_.back().end_ns : now_ns);
  }
}

void CaptureWindow::Finish() {
  if (state_ == WindowState::kIdle || state_ == WindowState::kDone ||
      state_ == WindowState::kStopped) {
    return;
  }
  const bool started = state_ != WindowState::kArmed;
  events_outside_ += held_.size();
  held_.clear();
  state_ = stopped_early_ || !started ? WindowState::kStopped : WindowState::kDone;
}

}  // namespace gpuspy::inject
