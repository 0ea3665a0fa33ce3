// Steps without NVTX: most jobs run with no profiler, so no ProfilerStep ranges exist. A training
// loop still repeats itself: the same kernels launched in the same order every iteration. This
// finds that repetition; failing that, it cuts fixed time windows (labelled as such).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "absl/container/flat_hash_map.h"

#include "analysis/step_segmenter.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::analysis {

// At least this many repetitions before a period is believed.
inline constexpr int kMinPeriodRepeats = 3;
// Kernel names compared when looking for the loop's recurring pattern.
inline constexpr size_t kPatternLength = 32;
// Period candidates tried, and sampled positions per candidate (bounds the cost on huge runs).
inline constexpr size_t kMaxCandidates = 256;
inline constexpr size_t kMatchSamples = 20000;
// A recurrence of the opening kernels is an iteration boundary when the host paused before it
// at least this share of the longest pause.
inline constexpr double kBoundaryPauseShare = 0.25;
// Shifted by the period, at least this share of the launch sequence must match itself.
inline constexpr double kMinSelfMatch = 0.90;
// A period is a training iteration only when it is plausible as one. Even the smallest model's
// step (forward, backward, optimizer of one layer) launches more than a handful of kernels, and
// a loop of identical kernels (elementwise chains, a benchmark) "repeats" with a period of one
// kernel: taken as steps, 250k 1 µs kernels became 250k steps and `analyze` ran > 100 s
// (issue 34; bench/results/hardening-stepless-2026-11-28.md).
inline constexpr size_t kMinPeriodKernels = 5;
// And it spans at least this long on average: launching 5 kernels alone costs the host ~25 µs
// (~5 µs each), and real training steps run for milliseconds; 100 µs leaves a wide margin under
// the shortest real step while refusing loops of microsecond kernels.
inline constexpr int64_t kMinPeriodNs = 100'000;
// Window length for the fallback.
inline constexpr int64_t kDefaultWindowNs = 1'000'000'000;

// What step detection keeps of a process's whole run, fed one decoded batch at a time: 24 bytes
// per kernel and 8 per API call, kernel and copy (for the fallback's windows), instead of every
// decoded event, so detecting the steps of a run of tens of millions of events does not need it
// all in memory at once (the collector analyses such runs in the background).
class StepDetectionInput {
 public:
  struct Launch {
    int64_t host_ns;  // the launch call's start once seen, else the kernel's start
    int64_t end_ns;
    StringRef name;
  };

  // The next batch's events, in the order they were stored.
  void Add(const EventColumns& events);
  // The same as DetectPeriodicSteps / FixedWindows over everything added.
  std::vector<StepWindow> Periodic();
  std::vector<StepWindow> Fixed(int64_t window_ns) const;
  // The kernels so far, in the order they arrived.
  const std::vector<Launch>& launches() const { return kernels_; }

 private:
  // Keeps the lookup maps to the calls and kernels of the last seconds (a kernel's record and its
  // launch call's arrive within a few flush periods of each other).
  void Prune();

  std::vector<Launch> kernels_;
  // Kernels seen before their launch call: correlation -> kernel indices.
  absl::flat_hash_map<uint64_t, std::vector<size_t>> awaiting_launch_;
  absl::flat_hash_map<uint64_t, int64_t> calls_;  // correlation -> call start
  std::vector<int64_t> activity_;  // starts of kernels, API calls and copies
  int64_t lo_ = std::numeric_limits<int64_t>::max();
  int64_t hi_ = std::numeric_limits<int64_t>::min();
  int64_t newest_ns_ = std::numeric_limits<int64_t>::min();
  size_t batches_ = 0;
};

// Steps from the kernel launch sequence. An iteration boundary is taken where the host pauses
// longest between launches in the steady half of the run (input loading, end-of-step sync); the
// kernels opening that iteration recur once per iteration; the period is the recurrence distance
// under which the whole sequence best matches itself. Each step runs from one recurrence to the
// next, the last to the process's last GPU work. Source "period:<N> kernels". Empty without a
// convincing period.
std::vector<StepWindow> DetectPeriodicSteps(const EventColumns& events, const StringTable& strings);

// Fixed windows over the process's activity, numbered by position from its first event (windows
// without any CUDA work are left out), source "window:<ms>ms".
std::vector<StepWindow> FixedWindows(const EventColumns& events, int64_t window_ns);

}  // namespace gpuspy::analysis
