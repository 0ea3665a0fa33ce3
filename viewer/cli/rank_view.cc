#include "viewer/cli/rank_view.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "analysis/detector_names.h"
#include "viewer/cli/format.h"
#include "viewer/cli/table.h"

namespace gpuspy::cli {

using analysis::DetectorName;

namespace {

// Beyond this many ranks a column per rank no longer fits a terminal: min/median/max instead.
constexpr size_t kMaxRankColumns = 8;
constexpr char kStragglerMark = '*';
constexpr char kNoVerdict[] = "--";

std::string RankText(int32_t rank) { return rank >= 0 ? std::to_string(rank) : "-"; }

// The cell of `rank` in `step`, or nullptr when that rank has no such step.
const v1::RankStepCell* CellOf(const v1::JobStep& step, int32_t rank) {
  for (const v1::RankStepCell& c : step.ranks()) {
    if (c.rank() == rank) return &c;
  }
  return nullptr;
}

}  // namespace

// A switch, not a list of names: the compiler (-Wswitch) asks for a code for every new detector.
std::string VerdictCode(v1::Detector detector) {
  switch (detector) {
    case v1::DETECTOR_UNSPECIFIED:
    case v1::none: return kNoVerdict;
    case v1::gpu_bound: return "GB";
    case v1::gpu_idle: return "GI";
    case v1::sync_stall: return "SY";
    case v1::copy_dominated: return "CP";
    case v1::input_stall: return "IN";
    case v1::launch_storm: return "LS";
    case v1::alloc_churn: return "AC";
    case v1::fp32_gemm: return "FP";
    case v1::warmup: return "WU";
    case v1::outlier_step: return "OU";
    case v1::straggler: return "ST";
    case v1::straggler_wait: return "SW";
    case v1::exposed_comm: return "EC";
    case v1::comm_storm: return "CS";
    case v1::unfused_elementwise: return "UE";
    case v1::unfused_attention: return "UA";
    case v1::memory_growth: return "MG";
    // Rare as a verdict: spelled out.
    case v1::host_bound:
    case v1::cuda_api_bound:
    case v1::new_kernels:
    case v1::insufficient_data:
    case v1::Detector_INT_MIN_SENTINEL_DO_NOT_USE_:
    case v1::Detector_INT_MAX_SENTINEL_DO_NOT_USE_: break;
  }
  return DetectorName(detector);
}

std::vector<const v1::JobStep*> PickSteps(const v1::JobSummary& summary, const StepPick& pick) {
  std::vector<const v1::JobStep*> steps;
  for (const v1::JobStep& s : summary.steps()) {
    if (pick.step < 0 || s.number() == pick.step) steps.push_back(&s);
  }
  std::sort(steps.begin(), steps.end(),
            [](const v1::JobStep* a, const v1::JobStep* b) { return a->number() < b->number(); });
  if (pick.step < 0 && !pick.all && pick.last > 0 && steps.size() > pick.last) {
    steps.erase(steps.begin(), steps.end() - pick.last);
  }
  return steps;
}

std::set<int32_t> RanksOf(const std::vector<const v1::JobStep*>& steps) {
  std::set<int32_t> ranks;
  for (const v1::JobStep* s : steps) {
    for (const v1::RankStepCell& c : s->ranks()) ranks.insert(c.rank());
  }
  return ranks;
}

void PrintRankSteps(const std::vector<const v1::JobStep*>& steps, int32_t rank, std::ostream& out) {
  std::set<int32_t> ranks = RanksOf(steps);
  if (ranks.size() < 2) return;
  if (rank >= 0) ranks = {rank};
  const bool per_rank = ranks.size() <= kMaxRankColumns;
  std::vector<std::string> header = {">STEP", ">SLOWEST", ">STRAGGLER"};
  if (per_rank) {
    for (int32_t r : ranks) header.push_back(absl::StrCat(">WAIT r", r));
  } else {
    header.push_back(">WAIT MIN/MEDIAN/MAX");
  }
  header.push_back(">MAX EXPOSED");
  Table t(header);
  for (const v1::JobStep* s : steps) {
    std::vector<std::string> row = {std::to_string(s->number()), RankText(s->slowest_rank()),
                                    RankText(s->straggler_rank())};
    int64_t exposed = 0;
    for (int32_t r : ranks) {
      const v1::RankStepCell* c = CellOf(*s, r);
      if (per_rank) row.push_back(c != nullptr ? Ms(c->wait_ns()) : "-");
      if (c == nullptr) continue;
      exposed = std::max(exposed, c->exposed_comm_ns());
    }
    if (!per_rank) {
      row.push_back(s->ranks().empty() ? "-"
                                       : absl::StrCat(Ms(s->min_wait_ns()), "/", Ms(s->median_wait_ns()), "/",
                                                      Ms(s->max_wait_ns())));
    }
    row.push_back(Ms(exposed));
    t.Add(std::move(row));
  }
  out << "\nranks per step (ms; wait = time in collectives waiting for the last rank, "
         "straggler = the rank the others waited for):\n";
  t.Print(out);
}

void PrintRankMatrix(const std::vector<const v1::JobStep*>& steps, int32_t rank, std::ostream& out) {
  std::set<int32_t> ranks = RanksOf(steps);
  if (rank >= 0) ranks = {rank};
  // Every step column as wide as the widest cell (a code and its mark), so the grid is even.
  size_t width = 0;
  for (const v1::JobStep* s : steps) {
    width = std::max(width, std::to_string(s->number()).size());
    for (const v1::RankStepCell& c : s->ranks()) {
      width = std::max(width, VerdictCode(c.primary_bottleneck()).size() + 1);
    }
  }
  std::vector<std::string> header = {">RANK"};
  for (const v1::JobStep* s : steps) {
    std::string label = std::to_string(s->number());
    label.resize(width, ' ');
    header.push_back(std::move(label));
  }
  header.push_back(">STRAGGLER STEPS");
  Table t(header);
  std::map<std::string, std::string> legend;  // code -> detector, of the codes shown
  for (int32_t r : ranks) {
    std::vector<std::string> row = {RankText(r)};
    int straggler_steps = 0;
    for (const v1::JobStep* s : steps) {
      const v1::RankStepCell* c = CellOf(*s, r);
      if (c == nullptr) {
        row.push_back("");
        continue;
      }
      const std::string code = VerdictCode(c->primary_bottleneck());
      legend[code] = c->primary_bottleneck() == v1::DETECTOR_UNSPECIFIED
                         ? "none"
                         : DetectorName(c->primary_bottleneck());
      straggler_steps += c->straggler() ? 1 : 0;
      row.push_back(c->straggler() ? code + kStragglerMark : code);
    }
    row.push_back(std::to_string(straggler_steps));
    t.Add(std::move(row));
  }
  t.Print(out);
  std::string text;
  for (const auto& [code, detector] : legend) {
    if (code != detector) absl::StrAppend(&text, text.empty() ? "" : ", ", code, " ", detector);
  }
  absl::StrAppend(&text, text.empty() ? "" : ", ", std::string(1, kStragglerMark),
                  " straggler (the others waited for this rank)");
  out << "legend: " << text << "\n";
}

}  // namespace gpuspy::cli
