// What the host was doing while the GPU waited for it, from the host ranges the producer
// recorded (Kineto cpu_op / user_annotation / python_function events, live NVTX ranges).
//
// For each idle gap, the thread the GPU waited for is the one that issued the CUDA call ending
// the gap (the last call starting before the gap ends); each instant of the gap goes to the
// outermost ATen op open on that thread then (what the user's code called), or, outside ops, to
// the innermost host range (a Python frame, an annotation), summed per name. Wrappers around the
// whole step say nothing and are left out (IsActivityRange).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analysis/intervals.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::analysis {

struct HostActivity {
  std::string name;    // the host range ("aten::unflatten_dense_tensors", "train.py(57): f")
  int64_t ns = 0;      // gap time it owned on the waited-for thread
};

// What names an instant of the waited-for thread's time.
enum class HostView {
  kActivity,   // the outermost ATen op, else the innermost host range (above)
  kUserLines,  // the innermost Python frame of the user's own code (a with_stack=True trace's
               // python_function ranges), as a call site: "train.py:75 compute_metrics", the
               // line to change, where kActivity may name an ATen op or a library's frame
};

// Most time first, at most `top` entries. `gaps` is a set of GPU-idle intervals of `window`.
std::vector<HostActivity> HostActivityDuring(const EventColumns& events, const StringTable& strings,
                                             Interval window, const IntervalSet& gaps, size_t top,
                                             HostView view = HostView::kActivity);

// HostActivityDuring for one window asked many times (a step's detectors and fixes ask it of
// several sets of gaps and both views): the window's CUDA calls are sorted once, and each thread's
// stretches (who owned its time) are found once per view, when first asked for.
class HostActivityIndex {
 public:
  // `events` and `strings` must outlive the index.
  HostActivityIndex(const EventColumns& events, const StringTable& strings, Interval window)
      : events_(events), strings_(strings), window_(window) {}
  std::vector<HostActivity> During(const IntervalSet& gaps, size_t top,
                                   HostView view = HostView::kActivity);

  // A stretch of a thread's time and the range that owned it (the view's owner).
  struct Stretch {
    Interval span;
    StringRef name;
  };

 private:
  void SortCalls();
  const std::vector<Stretch>& StretchesOf(uint32_t thread_id, HostView view);
  const std::string& UserSite(StringRef frame);

  const EventColumns& events_;
  const StringTable& strings_;
  Interval window_;
  bool calls_sorted_ = false;
  std::vector<const ApiEvent*> calls_;  // the window's calls by start
  uint32_t busiest_ = 0;                // the thread with the most of them
  std::map<std::pair<HostView, uint32_t>, std::vector<Stretch>> stretches_;
  absl::flat_hash_map<StringRef, std::string> site_of_;  // kUserLines: a frame's call site
};

// The Python lines the host sampler caught inside `gaps` (host samples: NVTX marks of
// kHostSampleDomain named by call site; inject/core/host_sampler.h), most samples first, at most
// `top`. Samples are taken at a steady rate, so a line's share of the samples is its share of the
// sampled gap time: `ns` estimates it as that share of the gaps' total.
struct HotLine {
  std::string site;      // "train.py:57 compute_metrics <- train.py:80 train"
  uint32_t samples = 0;
  int64_t ns = 0;
};
struct HotLines {
  std::vector<HotLine> lines;
  uint32_t samples = 0;  // all samples inside the gaps, the lines left out included
};
HotLines HotLinesDuring(const EventColumns& events, const StringTable& strings, const IntervalSet& gaps,
                        size_t top);

// The CUDA calls around a gap: the last one ending at or before its start and the first one
// starting at or after its end (nullptr when there is none in `events`).
struct GapNeighbours {
  const ApiEvent* before = nullptr;
  const ApiEvent* after = nullptr;
};
GapNeighbours CallsAround(const EventColumns& events, Interval gap);

}  // namespace gpuspy::analysis
