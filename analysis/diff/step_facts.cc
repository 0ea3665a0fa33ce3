#include "analysis/diff/step_facts.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "analysis/api_classifier.h"
#include "analysis/api_name_memo.h"
#include "analysis/blocking_calls.h"
#include "analysis/kernel_classes.h"

namespace gpuspy::analysis {
namespace {

bool TouchesHost(const MemcpyEvent& m) {
  return m.copy_kind == CopyKind::kHtoD || m.copy_kind == CopyKind::kDtoH;
}

}  // namespace

StepFacts MeasureStepFacts(const EventColumns& ev, const StringTable& strings, Interval w,
                           KernelClasses* shared_classes) {
  StepFacts out;
  absl::flat_hash_map<StringRef, KernelFact> by_name;
  KernelClasses own_classes;
  KernelClasses& classes = shared_classes != nullptr ? *shared_classes : own_classes;
  for (const KernelEvent& k : ev.kernels) {
    if (!InWindow(k.start_ns, k.end_ns, w)) continue;
    if (classes.IsCommunication(strings, k.name)) continue;
    KernelFact& f = by_name[k.name];
    ++f.calls;
    f.ns += std::min(k.end_ns, w.end_ns) - std::max(k.start_ns, w.start_ns);
  }
  for (auto& [ref, f] : by_name) {
    f.name = std::string(strings.Get(ref));
    out.kernels.push_back(std::move(f));
  }
  // Whole-graph records stand for their nodes' kernels: one name per graph.
  absl::flat_hash_map<uint32_t, KernelFact> graphs;
  for (const GraphLaunchEvent& g : ev.graph_launches) {
    if (!InWindow(g.start_ns, g.end_ns, w)) continue;
    KernelFact& f = graphs[g.graph_id];
    ++f.calls;
    f.ns += std::min(g.end_ns, w.end_ns) - std::max(g.start_ns, w.start_ns);
  }
  for (auto& [id, f] : graphs) {
    f.name = "CUDA graph " + std::to_string(id);
    out.kernels.push_back(std::move(f));
  }

  absl::flat_hash_map<std::string, BlockingSiteFact> by_site;
  absl::flat_hash_map<std::string, absl::flat_hash_map<std::string, uint64_t>> apis_at;
  for (const BlockingCall& c : FindBlockingCalls(ev, strings, w)) {
    const std::string api = c.api != nullptr ? std::string(strings.Get(c.api->name))
                                             : std::string("synchronization");
    const std::string site = c.api != nullptr && c.api->call_site != 0
                                 ? std::string(strings.Get(c.api->call_site))
                                 : api;
    BlockingSiteFact& f = by_site[site];
    ++f.calls;
    f.blocked_ns += c.span.length();
    ++apis_at[site][api];
  }
  for (auto& [site, f] : by_site) {
    f.site = site;
    // The call made there most often names the site's kind of wait (ties: the first by name).
    const auto& apis = apis_at[site];
    const auto top = std::max_element(apis.begin(), apis.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second < b.second : a.first > b.first;
    });
    f.api = top->first;
    out.blocking_sites.push_back(std::move(f));
  }

  ApiNameMemo is_launch(strings, IsLaunchApi);
  for (const ApiEvent& a : ev.apis) {
    if (InWindow(a.start_ns, a.end_ns, w) && is_launch(a.name)) ++out.launches;
  }
  for (const MemcpyEvent& m : ev.memcpys) {
    if (!InWindow(m.start_ns, m.end_ns, w)) continue;
    ++out.copies;
    if (!TouchesHost(m)) continue;
    if (IsPageableCopy(m)) {
      ++out.pageable_copies;
      out.pageable_bytes += m.bytes;
    } else {
      out.pinned_bytes += m.bytes;
    }
  }
  return out;
}

}  // namespace gpuspy::analysis
