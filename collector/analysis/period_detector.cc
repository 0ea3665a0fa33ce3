#include "collector/analysis/period_detector.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "absl/container/flat_hash_map.h"

namespace gpuspy::analysis {

std::vector<StepWindow> DetectPeriodicSteps(const EventColumns& ev, const StringTable& strings) {
  if (ev.kernels.empty()) return {};
  // Kernels in launch order (by their launch call when known, else by start).
  absl::flat_hash_map<uint64_t, int64_t> launch_time;
  for (const ApiEvent& a : ev.apis) launch_time[a.correlation_id] = a.start_ns;
  struct Launch {
    int64_t host_ns;
    int64_t end_ns;
    StringRef name;
  };
  std::vector<Launch> seq;
  seq.reserve(ev.kernels.size());
  for (const KernelEvent& k : ev.kernels) {
    auto it = launch_time.find(k.correlation_id);
    seq.push_back({it != launch_time.end() ? it->second : k.start_ns, k.end_ns, k.name});
  }
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

  // Iteration starts: every recurrence of the opening kernels, at least most of a period apart.
  // Matching rather than striding keeps warm-up iterations (extra kernels) from shifting every
  // later boundary.
  std::vector<size_t> starts;
  for (size_t h : hits) {
    if (!starts.empty() && h - starts.back() < period * 3 / 4) continue;
    starts.push_back(h);
  }
  if (starts.size() < static_cast<size_t>(kMinPeriodRepeats)) return {};
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
  (void)strings;
  std::vector<StepWindow> steps;
  for (size_t i = 0; i < starts.size(); ++i) {
    const int64_t start = seq[starts[i]].host_ns;
    const int64_t end = i + 1 < starts.size() ? seq[starts[i + 1]].host_ns : last_end;
    if (end > start) steps.push_back({static_cast<int64_t>(i), start, end, source});
  }
  return steps;
}

std::vector<StepWindow> FixedWindows(const EventColumns& ev, int64_t window_ns) {
  std::vector<StepWindow> out;
  if (ev.empty() || window_ns <= 0) return out;
  const auto [lo, hi] = ev.TimeRange();
  // Only windows in which the process did CUDA work: a long idle stretch is not a "step".
  std::vector<int64_t> activity;
  for (const auto& k : ev.kernels) activity.push_back(k.start_ns);
  for (const auto& a : ev.apis) activity.push_back(a.start_ns);
  for (const auto& m : ev.memcpys) activity.push_back(m.start_ns);
  std::sort(activity.begin(), activity.end());
  const std::string source = "window:" + std::to_string(window_ns / 1'000'000) + "ms";
  int64_t n = 0;
  for (int64_t t = lo; t < hi; t += window_ns) {
    const int64_t end = std::min(t + window_ns, hi);
    auto it = std::lower_bound(activity.begin(), activity.end(), t);
    if (it != activity.end() && *it < end) out.push_back({n, t, end, source});
    ++n;
  }
  return out;
}

}  // namespace gpuspy::analysis
