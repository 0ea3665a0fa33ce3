#include "analysis/period_detector.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "analysis/saturating.h"
#include "analysis/step_source.h"

namespace gpuspy::analysis {

namespace {

// A launch call's record and its kernels' arrive within a few flush periods of each other (plus
// however far the host runs ahead of the GPU); calls older than this are not looked up anymore.
constexpr int64_t kMatchHorizonNs = 10'000'000'000;
constexpr size_t kPruneEveryBatches = 64;

}  // namespace

void StepDetectionInput::Add(const EventColumns& ev) {
  // Kernels in launch order (by their launch call when known, else by start).
  // A call stays known after its first kernel: one graph launch call has many kernels.
  for (const ApiEvent& a : ev.apis) {
    activity_.push_back(a.start_ns);
    newest_ns_ = std::max(newest_ns_, a.start_ns);
    calls_[a.correlation_id] = a.start_ns;
    if (auto k = awaiting_launch_.find(a.correlation_id); k != awaiting_launch_.end()) {
      for (size_t i : k->second) kernels_[i].host_ns = a.start_ns;
      awaiting_launch_.erase(k);
    }
  }
  for (const KernelEvent& k : ev.kernels) {
    activity_.push_back(k.start_ns);
    newest_ns_ = std::max(newest_ns_, k.start_ns);
    int64_t host_ns = k.start_ns;
    if (auto c = calls_.find(k.correlation_id); c != calls_.end()) {
      host_ns = c->second;
    } else {
      awaiting_launch_[k.correlation_id].push_back(kernels_.size());
    }
    kernels_.push_back({host_ns, k.end_ns, k.name});
  }
  for (const MemcpyEvent& m : ev.memcpys) activity_.push_back(m.start_ns);
  if (!ev.empty()) {
    const auto [lo, hi] = ev.TimeRange();
    lo_ = std::min(lo_, lo);
    hi_ = std::max(hi_, hi);
  }
  if (++batches_ % kPruneEveryBatches == 0) Prune();
}

void StepDetectionInput::Prune() {
  const int64_t horizon = SatSub(newest_ns_, kMatchHorizonNs);  // a hostile clock may sit at int64's floor
  absl::erase_if(calls_, [&](const auto& c) { return c.second < horizon; });
  absl::erase_if(awaiting_launch_,
                 [&](const auto& k) { return kernels_[k.second.front()].host_ns < horizon; });
}

std::vector<StepWindow> DetectPeriodicSteps(const EventColumns& ev, const StringTable&) {
  StepDetectionInput in;
  in.Add(ev);
  return in.Periodic();
}

std::vector<StepWindow> FixedWindows(const EventColumns& ev, int64_t window_ns) {
  StepDetectionInput in;
  in.Add(ev);
  return in.Fixed(window_ns);
}

std::vector<StepWindow> StepDetectionInput::Periodic() {
  std::vector<Launch>& seq = kernels_;
  if (seq.empty()) return {};
  std::stable_sort(seq.begin(), seq.end(),
                   [](const Launch& a, const Launch& b) { return a.host_ns < b.host_ns; });
  const size_t n = seq.size();
  if (n < kMinPeriodRepeats * 2) return {};

  auto same = [&](size_t i, size_t j, size_t len) {
    for (size_t k = 0; k < len; ++k) {
      if (seq[i + k].name != seq[j + k].name) return false;
    }
    return true;
  };
  // An iteration boundary is where the host pauses longest between launches (input loading and
  // the end-of-step sync sit there). Take the longest pause in the steady second half as one.
  size_t anchor = n / 2;
  int64_t longest = -1;
  for (size_t i = std::max<size_t>(1, n / 2); i < n; ++i) {
    const int64_t pause = seq[i].host_ns - seq[i - 1].host_ns;
    if (pause > longest) {
      longest = pause;
      anchor = i;
    }
  }
  // The kernels that open the iteration at the anchor recur once per iteration.
  const size_t head = std::min(kPatternLength, n - anchor);
  // Layers repeat inside an iteration, so the opening kernels may recur mid-iteration too; the
  // true boundaries also have the host pause before them. Fall back to names alone when pauses
  // do not single them out (a host that runs far ahead of the GPU).
  std::vector<size_t> hits, paused_hits;
  for (size_t i = 0; i + head <= n; ++i) {
    if (seq[i].name != seq[anchor].name || !same(i, anchor, head)) continue;
    hits.push_back(i);
    if (i > 0 && seq[i].host_ns - seq[i - 1].host_ns >= longest * kBoundaryPauseShare) {
      paused_hits.push_back(i);
    }
  }
  if (paused_hits.size() >= static_cast<size_t>(kMinPeriodRepeats)) hits = std::move(paused_hits);
  std::set<size_t> candidates;
  for (size_t x = 0; x < hits.size(); ++x) {
    for (size_t y = x + 1; y < hits.size() && y <= x + 3; ++y) {
      const size_t d = hits[y] - hits[x];
      if (d * kMinPeriodRepeats <= n && candidates.size() < kMaxCandidates) candidates.insert(d);
    }
  }
  // The period is the shift under which the sequence best matches itself.
  size_t period = 0;
  double best = 0;
  for (size_t p : candidates) {
    const size_t from = n / 4;
    if (from + p >= n) continue;
    const size_t stride = std::max<size_t>(1, (n - p - from) / kMatchSamples);
    size_t total = 0, match = 0;
    for (size_t i = from; i + p < n; i += stride, ++total) match += seq[i].name == seq[i + p].name;
    const double score = total > 0 ? static_cast<double>(match) / total : 0;
    if (score > best + 1e-9) {
      best = score;
      period = p;
    }
  }
  if (period == 0 || best < kMinSelfMatch) return {};
  // The shortest shift that matches best is the loop's period (its multiples match as well): a
  // loop of a few kernels is no training step, and neither are its multiples.
  if (period < kMinPeriodKernels) return {};

  // Iteration starts: every recurrence of the opening kernels, at least most of a period apart.
  // Matching rather than striding keeps warm-up iterations (extra kernels) from shifting every
  // later boundary.
  std::vector<size_t> starts;
  for (size_t h : hits) {
    if (!starts.empty() && h - starts.back() < period * 3 / 4) continue;
    starts.push_back(h);
  }
  if (starts.size() < static_cast<size_t>(kMinPeriodRepeats)) return {};
  const int64_t mean_period_ns = (seq[starts.back()].host_ns - seq[starts.front()].host_ns) /
                                 static_cast<int64_t>(starts.size() - 1);
  if (mean_period_ns < kMinPeriodNs) return {};
  // Warm-up iterations run other kernels (autotuning, compilation) and do not open like the
  // steady ones: before the first recurrence, fall back to the host pauses alone.
  // The biggest pauses of that stretch separate its iterations.
  int64_t prefix_longest = 0;
  for (size_t i = 1; i <= starts.front() && i < n; ++i) {
    prefix_longest = std::max(prefix_longest, seq[i].host_ns - seq[i - 1].host_ns);
  }
  std::vector<size_t> prefix = {0};
  for (size_t i = 1; i < starts.front(); ++i) {
    const bool paused = seq[i].host_ns - seq[i - 1].host_ns >= prefix_longest / 2;
    if (paused && i - prefix.back() >= period * 3 / 4 && starts.front() - i >= period * 3 / 4) {
      prefix.push_back(i);
    }
  }
  if (starts.front() > 0) starts.insert(starts.begin(), prefix.begin(), prefix.end());

  int64_t last_end = 0;
  for (const Launch& l : seq) last_end = std::max(last_end, l.end_ns);
  const std::string source = "period:" + std::to_string(period) + " kernels";
  std::vector<StepWindow> steps;
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t start = seq[starts[i]].host_ns;
    const int64_t end = i + 1 < starts.size() ? seq[starts[i + 1]].host_ns : last_end;
    if (end > start) steps.push_back({static_cast<int64_t>(i), start, end, source});
  }
  return steps;
}

std::vector<StepWindow> StepDetectionInput::Fixed(int64_t window_ns) const {
  std::vector<StepWindow> out;
  if (lo_ >= hi_ || window_ns <= 0) return out;
  // Only windows in which the process did CUDA work: a long idle stretch is not a "step". The
  // windows are found from the activity, not by walking the whole span: a hostile timestamp can
  // stretch [lo, hi) to 2^63 ns, billions of empty windows. Offsets are unsigned: hi - lo may not
  // fit an int64.
  std::vector<int64_t> activity = activity_;
  std::sort(activity.begin(), activity.end());
  const std::string source = WindowSource(window_ns);
  const uint64_t lo = static_cast<uint64_t>(lo_);
  const uint64_t span = static_cast<uint64_t>(hi_) - lo;
  const uint64_t window = static_cast<uint64_t>(window_ns);
  for (const int64_t a : activity) {
    if (a < lo_ || a >= hi_) continue;
    const uint64_t index = (static_cast<uint64_t>(a) - lo) / window;
    if (!out.empty() && static_cast<uint64_t>(out.back().number) == index) continue;
    const uint64_t offset = index * window;  // <= a - lo: no overflow
    const uint64_t end_offset = span - offset > window ? offset + window : span;
    out.push_back({static_cast<int64_t>(index), static_cast<int64_t>(lo + offset),
                   static_cast<int64_t>(lo + end_offset), source});
  }
  return out;
}

}  // namespace gpuspy::analysis
