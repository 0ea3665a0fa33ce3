#include "importers/kineto/python_call_sites.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "importers/kineto/absl_view.h"
#include "importers/kineto/bounded_strings.h"
#include "model/call_site.h"
#include "model/python_frame.h"

namespace gpuspy::importers {
// "Call stack" of an older with_stack=True cpu_op: "a.py(12): f;train.py(57): step;..." with the
// innermost frame first -> its innermost user-code frame ("train.py(57): step"), or empty.
std::string_view InnermostUserFrame(std::string_view stack) {
  const std::vector<std::string_view> frames = UserFramesOfStack(stack, 1);
  return frames.empty() ? std::string_view() : frames[0];
}

std::vector<std::string_view> UserFramesOfStack(std::string_view stack, size_t max) {
  std::vector<std::string_view> out;
  for (absl::string_view part : absl::StrSplit(AbslView(stack), ';')) {
    if (out.size() == max) break;
    part = absl::StripAsciiWhitespace(part);
    const std::string_view frame(part.data(), part.size());
    if (!UserCallSite(frame).empty()) out.push_back(frame);
  }
  return out;
}

// Each CUDA call's call site: the innermost user-code Python frame open around it on its thread:
// python_function ranges, and `stack_frames` (from cpu_ops' "Call stack"). Needs `ev` sorted by
// start (python frames nest, so a per-thread stack sweep finds it).
void AttachPythonCallSites(EventColumns* ev, StringTable* strings,
                           const std::vector<NvtxRangeEvent>& stack_frames) {
  const StringRef python = strings->Find(kPythonFunctionDomain);
  if (python == 0 && stack_frames.empty()) return;
  absl::flat_hash_map<uint32_t, std::vector<const NvtxRangeEvent*>> frames_by_thread;
  for (const NvtxRangeEvent& r : ev->nvtx_ranges) {
    if (python != 0 && r.domain == python) frames_by_thread[r.thread_id].push_back(&r);
  }
  if (!stack_frames.empty()) {
    for (const NvtxRangeEvent& r : stack_frames) frames_by_thread[r.thread_id].push_back(&r);
    // Outer before inner at the same start, as the sweep expects.
    for (auto& [thread, frames] : frames_by_thread) {
      std::stable_sort(frames.begin(), frames.end(), [](const NvtxRangeEvent* a, const NvtxRangeEvent* b) {
        return a->start_ns != b->start_ns ? a->start_ns < b->start_ns : a->end_ns > b->end_ns;
      });
    }
  }
  absl::flat_hash_map<StringRef, StringRef> site_of;  // frame name -> call site (0: not user code)
  auto site = [&](StringRef frame) {
    auto [it, fresh] = site_of.try_emplace(frame, 0);
    if (fresh) {
      const std::string s = UserCallSite(std::string(strings->Get(frame)));
      if (!s.empty()) it->second = strings->Intern(s);
    }
    return it->second;
  };
  struct Sweep {
    size_t next = 0;
    std::vector<const NvtxRangeEvent*> open;
  };
  absl::flat_hash_map<uint32_t, Sweep> sweeps;
  // A site and its callers, as frame sites -> the chain's text (interned once per chain).
  absl::flat_hash_map<std::vector<StringRef>, StringRef> chains;
  std::vector<StringRef> chain;
  for (ApiEvent& a : ev->apis) {
    auto frames = frames_by_thread.find(a.thread_id);
    if (frames == frames_by_thread.end()) continue;
    Sweep& sw = sweeps[a.thread_id];
    const auto& f = frames->second;
    while (sw.next < f.size() && f[sw.next]->start_ns <= a.start_ns) {
      while (!sw.open.empty() && sw.open.back()->end_ns <= f[sw.next]->start_ns) sw.open.pop_back();
      sw.open.push_back(f[sw.next++]);
    }
    // Frames that ended before this call began enclose no later call either.
    while (!sw.open.empty() && sw.open.back()->end_ns <= a.start_ns) sw.open.pop_back();
    chain.clear();
    for (auto it = sw.open.rbegin(); it != sw.open.rend(); ++it) {
      if ((*it)->end_ns < a.end_ns) continue;  // a sibling that closed inside the call
      if (StringRef s = site((*it)->message); s != 0) {
        chain.push_back(s);
        if (chain.size() == 1 + kDefaultCallSiteCallers) break;
      }
    }
    if (chain.empty()) continue;
    auto [known, fresh] = chains.try_emplace(chain, chain[0]);
    if (fresh && chain.size() > 1) {
      std::string text(strings->Get(chain[0]));
      for (size_t i = 1; i < chain.size(); ++i) {
        absl::StrAppend(&text, AbslView(kCallerSeparator), AbslView(strings->Get(chain[i])));
      }
      // A chain of long frames could pass gpuspyd's limit on one string.
      std::string cut;
      known->second = strings->Intern(CutToLimit(text, &cut));
    }
    a.call_site = known->second;
  }
}

}  // namespace gpuspy::importers
