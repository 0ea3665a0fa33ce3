// What the host did while the GPU waited (analysis/host_activity.h): the thread the GPU waited
// for, the range that owned each instant of it, and HostActivityIndex answering by that rule
// however often and in whatever order it is asked.
#include "analysis/host_activity.h"

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "model/python_frame.h"

namespace gpuspy::analysis {
namespace {

constexpr int64_t us = 1'000;

class HostActivityTest : public ::testing::Test {
 protected:
  void Call(uint32_t tid, int64_t start, int64_t end) {
    ev_.apis.push_back({.start_ns = start, .end_ns = end, .name = strings_.Intern("cudaLaunchKernel"),
                        .thread_id = tid});
  }
  void Range(uint32_t tid, std::string_view domain, std::string_view name, int64_t start, int64_t end) {
    ev_.nvtx_ranges.push_back({.start_ns = start, .end_ns = end, .domain = strings_.Intern(domain),
                               .message = strings_.Intern(name), .thread_id = tid});
  }
  EventColumns ev_;
  StringTable strings_;
};

TEST_F(HostActivityTest, TheOutermostOpOnTheThreadTheGpuWaitedForOwnsTheGap) {
  // Thread 1 launches around the gap [100, 300) us; thread 2 (no launch near it) is busy too.
  Call(1, 90 * us, 100 * us);
  Call(1, 300 * us, 310 * us);
  Range(1, kCpuOpDomain, "aten::item", 120 * us, 260 * us);
  Range(1, kCpuOpDomain, "aten::copy_", 130 * us, 250 * us);  // inside aten::item: item's
  Range(1, kPythonFunctionDomain, "train.py(57): step", 100 * us, 300 * us);
  Range(2, kCpuOpDomain, "aten::decode", 100 * us, 300 * us);
  const IntervalSet gaps = IntervalSet::Union({{100 * us, 300 * us}});
  const Interval window{0, 400 * us};
  const std::vector<HostActivity> doing = HostActivityDuring(ev_, strings_, window, gaps, 5);
  ASSERT_EQ(doing.size(), 2u);
  EXPECT_EQ(doing[0].name, "aten::item");
  EXPECT_EQ(doing[0].ns, 140 * us);
  EXPECT_EQ(doing[1].name, "train.py(57): step");  // the rest of the gap, outside ops
  EXPECT_EQ(doing[1].ns, 60 * us);
  const std::vector<HostActivity> lines =
      HostActivityDuring(ev_, strings_, window, gaps, 5, HostView::kUserLines);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].name, "train.py:57 step");
  EXPECT_EQ(lines[0].ns, 200 * us);
  // Near miss: a gap after thread 2's only call is thread 2's.
  Call(2, 320 * us, 330 * us);
  Range(2, kCpuOpDomain, "aten::decode", 330 * us, 380 * us);
  const std::vector<HostActivity> later =
      HostActivityDuring(ev_, strings_, window, IntervalSet::Union({{340 * us, 360 * us}}), 5);
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].name, "aten::decode");
  EXPECT_EQ(later[0].ns, 20 * us);
}

// The rule by brute force, for ranges that nest properly: the gap's thread is the one whose call
// in the window started last before the gap ended (else the one with the most calls); each
// stretch between range boundaries goes to the outermost ATen op open then, else the innermost
// range (kUserLines: the innermost user frame).
std::vector<HostActivity> BruteForce(const EventColumns& ev, const StringTable& strings, Interval window,
                                     const IntervalSet& gaps, size_t top, HostView view) {
  std::map<uint32_t, int> calls_per_thread;
  for (const ApiEvent& a : ev.apis) {
    if (a.start_ns < window.end_ns && a.end_ns > window.start_ns) ++calls_per_thread[a.thread_id];
  }
  uint32_t busiest = 0;
  int most = 0;
  for (const auto& [tid, n] : calls_per_thread) {
    if (n > most) busiest = tid, most = n;
  }
  const StringRef cpu_op = strings.Find(kCpuOpDomain), python = strings.Find(kPythonFunctionDomain);
  std::map<std::string, int64_t> ns;
  for (const Interval& g : gaps.intervals()) {
    const ApiEvent* last = nullptr;
    for (const ApiEvent& a : ev.apis) {
      if (a.start_ns < window.end_ns && a.end_ns > window.start_ns && a.start_ns <= g.end_ns &&
          (last == nullptr || a.start_ns > last->start_ns)) {
        last = &a;
      }
    }
    const uint32_t tid = last == nullptr ? busiest : last->thread_id;
    std::vector<const NvtxRangeEvent*> ranges;
    std::vector<int64_t> cuts = {g.start_ns, g.end_ns};
    for (const NvtxRangeEvent& r : ev.nvtx_ranges) {
      if (r.thread_id != tid) continue;
      if (view == HostView::kUserLines && (r.domain != python || UserCallSite(strings.Get(r.message)).empty())) continue;
      ranges.push_back(&r);
      for (int64_t t : {r.start_ns, r.end_ns}) {
        if (t > g.start_ns && t < g.end_ns) cuts.push_back(t);
      }
    }
    std::sort(cuts.begin(), cuts.end());
    for (size_t i = 0; i + 1 < cuts.size(); ++i) {
      const int64_t from = cuts[i], to = cuts[i + 1];
      if (to <= from) continue;
      const NvtxRangeEvent* outer_op = nullptr;
      const NvtxRangeEvent* inner = nullptr;
      for (const NvtxRangeEvent* r : ranges) {
        if (r->start_ns > from || r->end_ns < to) continue;
        if (view == HostView::kActivity && r->domain == cpu_op &&
            (outer_op == nullptr || r->start_ns < outer_op->start_ns)) {
          outer_op = r;
        }
        if (inner == nullptr || r->start_ns > inner->start_ns) inner = r;
      }
      const NvtxRangeEvent* owner = outer_op != nullptr ? outer_op : inner;
      if (owner == nullptr) continue;
      const std::string_view name = strings.Get(owner->message);
      ns[view == HostView::kActivity ? std::string(name) : UserCallSite(name)] += to - from;
    }
  }
  std::vector<HostActivity> out;
  for (const auto& [name, n] : ns) out.push_back({name, n});
  std::stable_sort(out.begin(), out.end(), [](const HostActivity& a, const HostActivity& b) { return a.ns > b.ns; });
  if (out.size() > top) out.resize(top);
  return out;
}

TEST_F(HostActivityTest, TheIndexAnswersTheRuleForEveryQueryInAnyOrder) {
  std::mt19937 rng(11);
  const char* ops[] = {"aten::mm", "aten::add", "aten::item", "aten::copy_"};
  const char* frames[] = {"train.py(10): loop", "model.py(20): forward", "torch/nn/module.py(5): call"};
  for (uint32_t tid = 1; tid <= 3; ++tid) {
    int64_t t = 0;
    while (t < 10'000 * us) {
      const int64_t len = static_cast<int64_t>(rng() % 200 + 1) * us;
      if (rng() % 2 == 0) Call(tid, t, t + len / 10);
      Range(tid, kPythonFunctionDomain, frames[rng() % 3], t, t + len);
      Range(tid, kCpuOpDomain, ops[rng() % 4], t + len / 4, t + len / 2);
      Range(tid, kCpuOpDomain, ops[rng() % 4], t + len / 3, t + len / 2);  // nested
      t += len + static_cast<int64_t>(rng() % 50) * us;
    }
  }
  const Interval window{1'000 * us, 9'000 * us};
  HostActivityIndex index(ev_, strings_, window);
  int answered = 0;
  for (int q = 0; q < 40; ++q) {
    std::vector<Interval> gaps;
    for (int g = 0; g < 1 + static_cast<int>(rng() % 6); ++g) {
      const int64_t start = window.start_ns + static_cast<int64_t>(rng() % 7'000) * us;
      gaps.push_back({start, start + static_cast<int64_t>(rng() % 500 + 1) * us});
    }
    const IntervalSet set = IntervalSet::Union(gaps);
    const HostView view = q % 3 == 0 ? HostView::kUserLines : HostView::kActivity;
    const size_t top = 1 + rng() % 4;
    const std::vector<HostActivity> want = BruteForce(ev_, strings_, window, set, top, view);
    const std::vector<HostActivity> got = index.During(set, top, view);
    ASSERT_EQ(got.size(), want.size()) << "query " << q;
    answered += want.empty() ? 0 : 1;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].name, want[i].name) << "query " << q;
      EXPECT_EQ(got[i].ns, want[i].ns) << "query " << q;
    }
  }
  EXPECT_GE(answered, 35) << "the queries must find host work";
}

}  // namespace
}  // namespace gpuspy::analysis
