#include "analysis/diff/run_diff.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/detector_names.h"
#include "analysis/diff/realised_gain.h"
#include "analysis/kernel_classifier.h"
#include "analysis/text_form.h"
#include "model/units.h"
#include "analysis/stats.h"

namespace gpuspy::analysis {
namespace {

constexpr std::string_view kTensorCoreClass = "gemm_tc";
constexpr std::string_view kFp32GemmClass = "gemm_fp32";
// Sites, collectives listed in one contribution's detail.
constexpr size_t kDetailItems = 3;

std::string Ms(int64_t ns) { return absl::StrFormat("%.2f ms", static_cast<double>(ns) / 1e6); }
std::string PerStepMs(int64_t a, int64_t b) {
  return absl::StrFormat("%.2f → %.2f ms/step", a / 1e6, b / 1e6);
}
std::string Calls(double a, double b) { return absl::StrFormat("%.4g → %.4g", a, b); }

// The parts of the wall time (WallParts), in the order they are shown.
struct Part {
  const char* name;
  std::function<int64_t(const v1::WallParts&)> get;
};
const std::vector<Part>& Parts() {
  static const std::vector<Part> parts = {
      {"compute", [](const v1::WallParts& p) { return p.compute_ns(); }},
      {"exposed_comm", [](const v1::WallParts& p) { return p.exposed_comm_ns(); }},
      {"idle_sync", [](const v1::WallParts& p) { return p.idle_sync_ns(); }},
      {"idle_launch", [](const v1::WallParts& p) { return p.idle_launch_ns(); }},
      {"idle_input", [](const v1::WallParts& p) { return p.idle_input_ns(); }},
      {"idle_host", [](const v1::WallParts& p) { return p.idle_host_ns(); }},
      {"idle_cuda_call", [](const v1::WallParts& p) { return p.idle_cuda_call_ns(); }},
  };
  return parts;
}

// A change worth listing: at least `threshold` and beyond the noise of both sides' means.
bool Significant(int64_t delta, int64_t threshold, double noise_a, double noise_b) {
  return std::llabs(delta) >= threshold &&
         std::abs(static_cast<double>(delta)) > kNoiseFactor * std::hypot(noise_a, noise_b);
}

const Part& PartNamed(std::string_view name) {
  for (const Part& p : Parts()) {
    if (p.name == name) return p;
  }
  return Parts().front();
}

// The part's change when it is significant, else 0.
int64_t PartDelta(const v1::RunProfile& a, const v1::RunProfile& b, std::string_view name,
                  int64_t threshold) {
  const Part& p = PartNamed(name);
  const int64_t delta = p.get(b.parts()) - p.get(a.parts());
  const bool significant =
      Significant(delta, threshold, static_cast<double>(p.get(a.parts_noise())),
                  static_cast<double>(p.get(b.parts_noise())));
  return significant ? delta : 0;
}

v1::StepTimeStats TimeStats(const v1::RunProfile& p) {
  v1::StepTimeStats s;
  std::vector<int64_t> v(p.step_wall_ns().begin(), p.step_wall_ns().end());
  s.set_steps(static_cast<uint32_t>(v.size()));
  s.set_median_ns(stats::Median(v));
  s.set_p90_ns(stats::Percentile(v, 0.9));
  s.set_mean_ns(p.parts().wall_ns());
  if (v.size() >= kMinStepsForNoise) {
    std::vector<int64_t> dev;
    dev.reserve(v.size());
    for (int64_t x : v) dev.push_back(std::llabs(x - s.median_ns()));
    const double sigma = 1.4826 * static_cast<double>(stats::Median(std::move(dev)));
    s.set_noise_ns(std::llround(1.2533 * sigma / std::sqrt(static_cast<double>(v.size()))));
  }
  return s;
}

// A kernel's name without "void " and its parameter list, for kernels whose short names collide
// ("..._kernel_cta_per_row_1<...>" vs "..._kernel_warp_per_row_1<...>" cut at the same length).
std::string SignatureName(const std::string& name) {
  constexpr size_t kMaxLength = 160;
  std::string_view v = name;
  if (v.substr(0, 5) == "void ") v.remove_prefix(5);
  v = v.substr(0, v.find('('));
  std::string out(v);
  return ClipName(out, kMaxLength);
}

struct KernelPair {
  const v1::KernelProfile* a = nullptr;
  const v1::KernelProfile* b = nullptr;
  int64_t delta() const { return (b ? b->ns_per_step() : 0) - (a ? a->ns_per_step() : 0); }
  const v1::KernelProfile& any() const { return b ? *b : *a; }
};

v1::Contribution Make(std::string kind, std::string part, std::string subject, std::string detail,
                      int64_t delta) {
  v1::Contribution c;
  c.set_kind(std::move(kind));
  c.set_part(std::move(part));
  c.set_subject(std::move(subject));
  c.set_detail(std::move(detail));
  c.set_delta_ns(delta);
  return c;
}

// GEMMs that moved between tensor cores and FP32 CUDA cores: one change, not a kernel removed
// and another added. Consumes the GEMM kernels it explains.
void TensorCoreSwitch(std::map<std::string, KernelPair>* kernels, int64_t threshold,
                      std::vector<v1::Contribution>* out) {
  int64_t tc_a = 0, tc_b = 0, fp_a = 0, fp_b = 0;
  double tc_var = 0, fp_var = 0;  // the classes' noise, kernels taken as independent
  const v1::KernelProfile* top_fp = nullptr;
  const v1::KernelProfile* top_tc = nullptr;
  for (const auto& [name, k] : *kernels) {
    const std::string& cls = k.any().kernel_class();
    const int64_t a = k.a ? k.a->ns_per_step() : 0, b = k.b ? k.b->ns_per_step() : 0;
    const double na = k.a ? static_cast<double>(k.a->noise_ns()) : 0;
    const double nb = k.b ? static_cast<double>(k.b->noise_ns()) : 0;
    if (cls == kTensorCoreClass) {
      tc_var += na * na + nb * nb;
      tc_a += a;
      tc_b += b;
      if (top_tc == nullptr || k.any().ns_per_step() > top_tc->ns_per_step()) top_tc = &k.any();
    } else if (cls == kFp32GemmClass) {
      fp_var += na * na + nb * nb;
      fp_a += a;
      fp_b += b;
      if (top_fp == nullptr || k.any().ns_per_step() > top_fp->ns_per_step()) top_fp = &k.any();
    }
  }
  const int64_t d_tc = tc_b - tc_a, d_fp = fp_b - fp_a;
  const bool fp_moved = Significant(d_fp, threshold, std::sqrt(fp_var), 0);
  const bool tc_moved = Significant(d_tc, threshold, std::sqrt(tc_var), 0);
  const bool lost = fp_moved && tc_moved && d_fp > 0 && d_tc < 0;
  const bool gained = fp_moved && tc_moved && d_tc > 0 && d_fp < 0;
  if (!lost && !gained) return;
  const std::string detail = absl::StrCat(
      "FP32 (CUDA-core) GEMMs ", PerStepMs(fp_a, fp_b), " (", ShortKernelName(top_fp->name()),
      "), tensor-core GEMMs ", PerStepMs(tc_a, tc_b), " (", ShortKernelName(top_tc->name()), ")",
      lost ? ": the GEMMs lost their tensor cores (FP32 inputs, TF32 off, or autocast gone)"
           : ": the GEMMs now run on tensor cores");
  out->push_back(Make(lost ? "tensor_cores_lost" : "tensor_cores_gained", "compute",
                      ShortKernelName(lost ? top_fp->name() : top_tc->name()), detail, d_fp + d_tc));
  for (auto it = kernels->begin(); it != kernels->end();) {
    const std::string& cls = it->second.any().kernel_class();
    it = cls == kTensorCoreClass || cls == kFp32GemmClass ? kernels->erase(it) : std::next(it);
  }
}

void KernelChanges(const v1::RunProfile& a, const v1::RunProfile& b, int64_t threshold,
                   std::vector<v1::Contribution>* out) {
  std::map<std::string, KernelPair> kernels;
  for (const v1::KernelProfile& k : a.kernels()) kernels[k.name()].a = &k;
  for (const v1::KernelProfile& k : b.kernels()) kernels[k.name()].b = &k;
  TensorCoreSwitch(&kernels, threshold, out);
  // Short names (ShortKernelName) read best, but two listed kernels must not look the same: those
  // whose short names collide keep their full names.
  std::vector<const std::string*> listed;
  std::map<std::string, int> short_names;
  for (const auto& [name, k] : kernels) {
    if (!Significant(k.delta(), threshold, k.a ? static_cast<double>(k.a->noise_ns()) : 0,
                     k.b ? static_cast<double>(k.b->noise_ns()) : 0)) {
      continue;
    }
    listed.push_back(&name);
    ++short_names[ShortKernelName(name)];
  }
  for (const std::string* name : listed) {
    const KernelPair& k = kernels.at(*name);
    const int64_t delta = k.delta();
    const double calls_a = k.a ? k.a->calls_per_step() : 0, calls_b = k.b ? k.b->calls_per_step() : 0;
    const int64_t mean_a = k.a ? k.a->mean_ns() : 0, mean_b = k.b ? k.b->mean_ns() : 0;
    auto each = [](double calls, int64_t mean) { return calls > 0 ? FormatDuration(mean) : "-"; };
    const std::string detail =
        absl::StrCat(Calls(calls_a, calls_b), " calls/step, ", each(calls_a, mean_a), " → ",
                     each(calls_b, mean_b), " each, ", PerStepMs(k.a ? k.a->ns_per_step() : 0,
                                                                 k.b ? k.b->ns_per_step() : 0));
    std::string kind;
    if (calls_a == 0) {
      kind = "kernel_new";
    } else if (calls_b == 0) {
      kind = "kernel_removed";
    } else {
      // The share of the change the call count explains at A's duration per call.
      const double from_calls = (calls_b - calls_a) * static_cast<double>(mean_a);
      const bool calls_changed = std::abs(calls_b - calls_a) > kCallsChangeShare * calls_a;
      if (calls_changed && std::abs(from_calls) >= std::abs(static_cast<double>(delta)) / 2) {
        kind = delta > 0 ? "kernel_more_calls" : "kernel_fewer_calls";
      } else {
        kind = delta > 0 ? "kernel_slower" : "kernel_faster";
      }
    }
    const std::string short_name = ShortKernelName(*name);
    out->push_back(Make(kind, "compute",
                        short_names[short_name] > 1 ? SignatureName(*name) : short_name, detail,
                        delta));
  }
}

void CopyChange(const v1::RunProfile& a, const v1::RunProfile& b, int64_t threshold,
                std::vector<v1::Contribution>* out) {
  const v1::CopyProfile &ca = a.copies(), &cb = b.copies();
  const int64_t delta = cb.ns_per_step() - ca.ns_per_step();
  if (!Significant(delta, threshold, static_cast<double>(ca.noise_ns()),
                   static_cast<double>(cb.noise_ns()))) {
    return;
  }
  const bool more_pageable = cb.pageable_bytes_per_step() > ca.pageable_bytes_per_step();
  out->push_back(Make(
      "copies", "compute", more_pageable ? "pageable host copies" : "copies",
      absl::StrCat(Calls(ca.copies_per_step(), cb.copies_per_step()), " copies/step (",
                   Calls(ca.pageable_copies_per_step(), cb.pageable_copies_per_step()),
                   " pageable), pageable ", FormatBytes(ca.pageable_bytes_per_step()), " → ",
                   FormatBytes(cb.pageable_bytes_per_step()), " and pinned ",
                   FormatBytes(ca.pinned_bytes_per_step()), " → ",
                   FormatBytes(cb.pinned_bytes_per_step()), " per step, ",
                   PerStepMs(ca.ns_per_step(), cb.ns_per_step())),
      delta));
}

void BlockingChange(const v1::RunProfile& a, const v1::RunProfile& b, int64_t delta,
                    std::vector<v1::Contribution>* out) {
  struct Site {
    const v1::BlockingSiteProfile* a = nullptr;
    const v1::BlockingSiteProfile* b = nullptr;
    int64_t delta() const {
      return (b ? b->blocked_ns_per_step() : 0) - (a ? a->blocked_ns_per_step() : 0);
    }
  };
  std::map<std::string, Site> sites;
  for (const v1::BlockingSiteProfile& s : a.blocking_sites()) sites[s.site()].a = &s;
  for (const v1::BlockingSiteProfile& s : b.blocking_sites()) sites[s.site()].b = &s;
  std::vector<std::pair<std::string, Site>> ranked(sites.begin(), sites.end());
  // The sites whose change goes the way of the part's change, largest first.
  std::stable_sort(ranked.begin(), ranked.end(), [delta](const auto& x, const auto& y) {
    return delta >= 0 ? x.second.delta() > y.second.delta() : x.second.delta() < y.second.delta();
  });
  std::vector<std::string> lines;
  for (size_t i = 0; i < ranked.size() && lines.size() < kDetailItems; ++i) {
    const Site& s = ranked[i].second;
    if (std::llabs(s.delta()) < kMinContributionNs || (s.delta() > 0) != (delta > 0)) break;
    const v1::BlockingSiteProfile& any = s.b ? *s.b : *s.a;
    lines.push_back(absl::StrCat(
        any.site(), any.site() == any.api() ? "" : absl::StrCat(" (", any.api(), ")"), " ",
        Calls(s.a ? s.a->calls_per_step() : 0, s.b ? s.b->calls_per_step() : 0), " calls/step, ",
        Ms(s.a ? s.a->blocked_ns_per_step() : 0), " → ", Ms(s.b ? s.b->blocked_ns_per_step() : 0),
        " blocked"));
  }
  const std::string subject = ranked.empty() || lines.empty() ? "host waits for the GPU"
                                                             : ranked.front().first;
  out->push_back(Make("blocking_calls", "idle_sync", subject,
                      absl::StrCat("GPU idle behind blocking calls ",
                                   PerStepMs(a.parts().idle_sync_ns(), b.parts().idle_sync_ns()),
                                   lines.empty() ? "" : ": ", absl::StrJoin(lines, "; ")),
                      delta));
}

// The GPU idle for other host work, named by where the host was (the host_bound finding's hot
// lines or the call sites that ended its gaps) when the step reports name a place: a diff line
// "+30 ms host work" says where, as the step report does.
void HostChange(const v1::RunProfile& a, const v1::RunProfile& b, int64_t delta,
                std::vector<v1::Contribution>* out) {
  struct Site {
    const v1::HostSiteProfile* a = nullptr;
    const v1::HostSiteProfile* b = nullptr;
    int64_t delta() const { return (b ? b->ns_per_step() : 0) - (a ? a->ns_per_step() : 0); }
  };
  std::map<std::pair<std::string, std::string>, Site> sites;
  for (const v1::HostSiteProfile& s : a.host_sites()) sites[{s.kind(), s.site()}].a = &s;
  for (const v1::HostSiteProfile& s : b.host_sites()) sites[{s.kind(), s.site()}].b = &s;
  std::vector<Site> ranked;
  for (const auto& [key, s] : sites) ranked.push_back(s);
  std::stable_sort(ranked.begin(), ranked.end(), [delta](const Site& x, const Site& y) {
    return delta >= 0 ? x.delta() > y.delta() : x.delta() < y.delta();
  });
  std::vector<std::string> lines;
  std::string subject = "host work";
  for (const Site& s : ranked) {
    if (lines.size() >= kDetailItems) break;
    if (std::llabs(s.delta()) < kMinContributionNs || (s.delta() > 0) != (delta > 0)) break;
    const v1::HostSiteProfile& any = s.b ? *s.b : *s.a;
    if (lines.empty()) subject = any.site();
    lines.push_back(absl::StrCat(any.kind() == "hot_line" ? "at " : "then resumed at ", any.site(), " ",
                                 Ms(s.a ? s.a->ns_per_step() : 0), " → ", Ms(s.b ? s.b->ns_per_step() : 0)));
  }
  out->push_back(Make("host", "idle_host", subject,
                      absl::StrCat("GPU idle while the host runs other code ",
                                   PerStepMs(a.parts().idle_host_ns(), b.parts().idle_host_ns()),
                                   lines.empty() ? "" : ": ", absl::StrJoin(lines, "; ")),
                      delta));
}

void CollectiveChange(const v1::RunProfile& a, const v1::RunProfile& b, int64_t delta,
                      std::vector<v1::Contribution>* out) {
  struct Op {
    const v1::CollectiveProfile* a = nullptr;
    const v1::CollectiveProfile* b = nullptr;
    int64_t delta() const { return (b ? b->ns_per_step() : 0) - (a ? a->ns_per_step() : 0); }
  };
  std::map<std::string, Op> ops;
  for (const v1::CollectiveProfile& c : a.collectives()) ops[c.op()].a = &c;
  for (const v1::CollectiveProfile& c : b.collectives()) ops[c.op()].b = &c;
  std::vector<std::pair<std::string, Op>> ranked(ops.begin(), ops.end());
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& x, const auto& y) {
    return std::llabs(x.second.delta()) > std::llabs(y.second.delta());
  });
  std::vector<std::string> lines;
  for (size_t i = 0; i < ranked.size() && i < kDetailItems; ++i) {
    const Op& o = ranked[i].second;
    const uint64_t bytes_a = o.a ? o.a->median_bytes() : 0, bytes_b = o.b ? o.b->median_bytes() : 0;
    // Live capture knows no message sizes (0): say nothing rather than "0 B".
    const std::string sizes = bytes_a == 0 && bytes_b == 0
                                  ? ""
                                  : absl::StrCat(" median ", bytes_a ? FormatBytes(bytes_a) : "?",
                                                 " → ", bytes_b ? FormatBytes(bytes_b) : "?", ",");
    lines.push_back(absl::StrCat(
        ranked[i].first, " ", Calls(o.a ? o.a->calls_per_step() : 0, o.b ? o.b->calls_per_step() : 0),
        " calls/step,", sizes, " ",
        PerStepMs(o.a ? o.a->ns_per_step() : 0, o.b ? o.b->ns_per_step() : 0)));
  }
  out->push_back(Make(
      "collectives", "exposed_comm", ranked.empty() ? "communication" : ranked.front().first,
      absl::StrCat("communication with nothing else running ",
                   PerStepMs(a.parts().exposed_comm_ns(), b.parts().exposed_comm_ns()),
                   ", waiting for other ranks ", PerStepMs(a.comm_wait_ns(), b.comm_wait_ns()),
                   lines.empty() ? "" : ": ", absl::StrJoin(lines, "; ")),
      delta));
}

std::vector<v1::VerdictChange> Verdicts(const v1::RunProfile& a, const v1::RunProfile& b) {
  std::map<std::string, v1::VerdictChange> by;  // by name: ties list alphabetically
  for (const v1::BottleneckCount& v : a.verdicts()) by[DetectorName(v.detector())].set_a_steps(v.steps());
  for (const v1::BottleneckCount& v : b.verdicts()) by[DetectorName(v.detector())].set_b_steps(v.steps());
  std::vector<v1::VerdictChange> out;
  for (auto& [detector, v] : by) {
    v.set_detector(ParseDetector(detector).value_or(v1::DETECTOR_UNSPECIFIED));
    out.push_back(v);
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& x, const auto& y) {
    return std::max(x.a_steps(), x.b_steps()) > std::max(y.a_steps(), y.b_steps());
  });
  return out;
}

}  // namespace

namespace {

bool OnlyWindows(const v1::RunProfile& p) { return p.windows() > 0 && p.windows() == p.steps(); }

}  // namespace

absl::Status CheckComparable(const v1::RunProfile& a, const v1::RunProfile& b) {
  if (OnlyWindows(a) == OnlyWindows(b)) return absl::OkStatus();
  const bool a_windows = OnlyWindows(a);
  const v1::RunProfile& w = a_windows ? a : b;
  const v1::RunProfile& s = a_windows ? b : a;
  return absl::FailedPreconditionError(absl::StrCat(
      "not comparable: ", a_windows ? "A" : "B", " (", w.label(), ") has no steps, only ", w.windows(),
      " time windows (no NVTX range matched the step pattern and no repeating kernel sequence was "
      "found), while ", a_windows ? "B" : "A", " (", s.label(), ") has ", s.steps(),
      " steps: a window is not a step, so their times per step say nothing about each other. Give "
      "both runs the same steps (an NVTX range or torch.profiler step around each iteration, or "
      "--step-pattern) and compare again"));
}

v1::RunDiff DiffRuns(const v1::RunProfile& a, const v1::RunProfile& b) {
  v1::RunDiff d;
  d.set_a_label(a.label());
  d.set_b_label(b.label());
  *d.mutable_a() = TimeStats(a);
  *d.mutable_b() = TimeStats(b);
  d.set_median_delta_ns(d.b().median_ns() - d.a().median_ns());
  if (d.a().median_ns() > 0) {
    d.set_median_delta_fraction(static_cast<double>(d.median_delta_ns()) /
                                static_cast<double>(d.a().median_ns()));
  }
  const double noise = std::hypot(static_cast<double>(d.a().noise_ns()),
                                  static_cast<double>(d.b().noise_ns()));
  const bool noise_known = d.a().steps() >= kMinStepsForNoise && d.b().steps() >= kMinStepsForNoise;
  d.set_within_noise(noise_known &&
                     std::abs(static_cast<double>(d.median_delta_ns())) <= kNoiseFactor * noise);
  d.set_mean_delta_ns(b.parts().wall_ns() - a.parts().wall_ns());
  for (const Part& p : Parts()) {
    v1::PartChange* c = d.add_parts();
    c->set_part(p.name);
    c->set_a_ns(p.get(a.parts()));
    c->set_b_ns(p.get(b.parts()));
    c->set_delta_ns(c->b_ns() - c->a_ns());
  }
  for (v1::VerdictChange& v : Verdicts(a, b)) *d.add_verdicts() = std::move(v);
  AddRealisedGains(a, b, &d);

  const int64_t threshold = std::max<int64_t>(
      kMinContributionNs,
      std::llround(kMinContributionShare * std::abs(static_cast<double>(d.mean_delta_ns()))));
  std::vector<v1::Contribution> items;
  KernelChanges(a, b, threshold, &items);
  CopyChange(a, b, threshold, &items);
  if (const int64_t delta = PartDelta(a, b, "exposed_comm", threshold); delta != 0) {
    CollectiveChange(a, b, delta, &items);
  }
  if (const int64_t delta = PartDelta(a, b, "idle_sync", threshold); delta != 0) {
    BlockingChange(a, b, delta, &items);
  }
  if (const int64_t delta = PartDelta(a, b, "idle_launch", threshold); delta != 0) {
    items.push_back(Make("launch_bound", "idle_launch", "kernel launches",
                         absl::StrCat("GPU idle while the host launches ",
                                      PerStepMs(a.parts().idle_launch_ns(), b.parts().idle_launch_ns()),
                                      ": ", Calls(a.launches_per_step(), b.launches_per_step()),
                                      " launches/step, ",
                                      Calls(a.kernels_per_step(), b.kernels_per_step()),
                                      " kernels/step"),
                         delta));
  }
  if (const int64_t delta = PartDelta(a, b, "idle_input", threshold); delta != 0) {
    items.push_back(Make("input", "idle_input", "input pipeline",
                         absl::StrCat("GPU idle waiting for the data loader ",
                                      PerStepMs(a.parts().idle_input_ns(), b.parts().idle_input_ns())),
                         delta));
  }
  if (const int64_t delta = PartDelta(a, b, "idle_host", threshold); delta != 0) {
    HostChange(a, b, delta, &items);
  }
  if (const int64_t delta = PartDelta(a, b, "idle_cuda_call", threshold); delta != 0) {
    items.push_back(Make("cuda_calls", "idle_cuda_call", "CUDA calls",
                         absl::StrCat("GPU idle while the host is inside CUDA calls with nothing to wait for ",
                                      PerStepMs(a.parts().idle_cuda_call_ns(), b.parts().idle_cuda_call_ns())),
                         delta));
  }
  std::stable_sort(items.begin(), items.end(), [](const auto& x, const auto& y) {
    return std::llabs(x.delta_ns()) > std::llabs(y.delta_ns());
  });
  if (items.size() > static_cast<size_t>(kMaxContributions)) items.resize(kMaxContributions);
  int64_t listed = 0;
  std::map<std::string, int64_t> explained;  // per part
  for (v1::Contribution& c : items) {
    listed += c.delta_ns();
    explained[c.part()] += c.delta_ns();
    *d.add_contributions() = std::move(c);
  }
  // What each part's change leaves unexplained: within its noise, under the threshold, overlaps.
  std::vector<std::string> rest;
  for (const v1::PartChange& p : d.parts()) {
    const int64_t left = p.delta_ns() - explained[p.part()];
    if (std::llabs(left) >= threshold) {
      rest.push_back(absl::StrCat(p.part(), " ", absl::StrFormat("%+.2f", left / 1e6), " ms"));
    }
  }
  *d.add_contributions() = Make(
      "other", "", "other",
      rest.empty() ? "changes each below the listing threshold or within the noise"
                   : absl::StrCat("not explained by a listed change (within the noise, under the "
                                  "threshold, or overlapping): ",
                                  absl::StrJoin(rest, ", ")),
      d.mean_delta_ns() - listed);

  for (const auto& [side, p] : {std::pair{"A", &a}, std::pair{"B", &b}}) {
    if (p->windows() > 0 && p->windows() == p->steps()) {
      // Windows are never steady, so "warm-up included" would misname them.
      d.add_notes(absl::StrCat(side, " (", p->label(), ") has no steps: its ", p->windows(),
                               " time windows are compared (no NVTX range matched the step pattern "
                               "and no repeating kernel sequence was found); figures are per window"));
    } else if (p->warmup_included()) {
      d.add_notes(absl::StrCat(side, " (", p->label(), ") has no steady step: all ", p->steps(),
                               " of its steps are compared, warm-up included"));
    }
  }
  if (!noise_known) {
    d.add_notes(absl::StrCat("fewer than ", kMinStepsForNoise,
                             " steps on a side: the noise of the step time is not known"));
  }
  if (a.ranks() != b.ranks()) {
    d.add_notes(absl::StrCat("A spans ", CountOf(a.ranks(), "rank", "ranks"), ", B ",
                             CountOf(b.ranks(), "rank", "ranks")));
  }
  return d;
}

}  // namespace gpuspy::analysis
