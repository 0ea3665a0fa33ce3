#include "viewer/cli/diff_view.h"

#include <cmath>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analysis/detector_names.h"
#include "viewer/cli/format.h"
#include "viewer/cli/table.h"

namespace gpuspy::cli {

using analysis::DetectorName;

namespace {

std::string SignedMs(int64_t ns) {
  return absl::StrFormat("%+.2f", static_cast<double>(ns) / 1e6);
}

void Side(const char* name, const std::string& label, const v1::StepTimeStats& s, Table* t) {
  t->Add({name, label, std::to_string(s.steps()), Ms(s.median_ns()), Ms(s.p90_ns()),
          Ms(s.mean_ns()), s.noise_ns() > 0 ? Ms(s.noise_ns()) : "-"});
}

// A gain as the step time's change: a saving prints negative, as the contributions do.
std::string GainAsChange(int64_t gain_ns) { return absl::StrCat(SignedMs(-gain_ns), " ms"); }

void PrintRealised(const v1::RunDiff& d, std::ostream& out) {
  if (d.realised().empty()) return;
  out << "\nFIXED SINCE A (predicted: A's what-if replay; realised: the change of the median step, "
         "all of it)\n";
  for (const v1::RealisedGain& g : d.realised()) {
    out << "  " << DetectorName(g.detector()) << ": predicted " << GainAsChange(g.predicted_gain_ns())
        << (g.predicted_by_replay() ? "" : " (idle attributed, not replayed)") << ", realised "
        << GainAsChange(g.realised_gain_ns())
        << absl::StrFormat(" (%.0f%%)", 100.0 * g.realised_fraction());
    if (g.still_present_share() > 0) {
      out << absl::StrFormat("; still in %.0f%% of B's steps, ", 100.0 * g.still_present_share())
          << FormatMs(g.b_median_lost_ns()) << " each";
    }
    out << "\n";
  }
  if (d.has_realised_together()) {
    const v1::RealisedTogether& t = d.realised_together();
    out << "  " << t.fixes() << " fixes together: predicted " << GainAsChange(t.predicted_gain_ns())
        << (t.predicted_basis() == "all_fixes_replay" ? " (A's all-fixes replay)"
                                                      : " (sum of the single predictions)")
        << ", realised " << GainAsChange(t.realised_gain_ns())
        << absl::StrFormat(" (%.0f%%)", 100.0 * t.realised_fraction()) << "\n";
  }
  out << "  B's primary now: " << DetectorName(d.realised(0).new_primary()) << "\n";
}

}  // namespace

void PrintDiff(const v1::RunDiff& d, std::ostream& out) {
  Table sides({"", "RUN", ">STEPS", ">MEDIAN ms", ">P90 ms", ">MEAN ms", ">± ms"});
  Side("A", d.a_label(), d.a(), &sides);
  Side("B", d.b_label(), d.b(), &sides);
  sides.Print(out);
  const char* direction = d.median_delta_ns() > 0 ? "slower" : "faster";
  out << "\n";
  if (d.median_delta_ns() == 0) {
    out << "B's median step time is the same as A's";
  } else {
    out << "B is " << direction << " by " << FormatMs(std::llabs(d.median_delta_ns()))
        << " per step (" << absl::StrFormat("%+.1f%%", 100.0 * d.median_delta_fraction())
        << ", median)";
  }
  const int64_t noise = static_cast<int64_t>(
      std::hypot(static_cast<double>(d.a().noise_ns()), static_cast<double>(d.b().noise_ns())));
  if (d.within_noise()) {
    out << ": within the noise of the step times (± " << FormatMs(noise) << ")";
  } else if (noise > 0) {
    out << ", beyond the noise (± " << FormatMs(noise) << ")";
  }
  out << "\n";
  for (const std::string& n : d.notes()) out << "note: " << n << "\n";

  out << "\n";
  Table parts({"WHERE THE STEP GOES", ">A ms", ">B ms", ">CHANGE ms"});
  for (const v1::PartChange& p : d.parts()) {
    if (p.a_ns() == 0 && p.b_ns() == 0) continue;
    parts.Add({p.part(), Ms(p.a_ns()), Ms(p.b_ns()), SignedMs(p.delta_ns())});
  }
  parts.Add({"step (mean)", Ms(d.a().mean_ns()), Ms(d.b().mean_ns()), SignedMs(d.mean_delta_ns())});
  parts.Print(out);

  std::vector<std::string> verdicts;
  for (const v1::VerdictChange& v : d.verdicts()) {
    verdicts.push_back(absl::StrCat(DetectorName(v.detector()), " ", v.a_steps(), " → ", v.b_steps()));
  }
  if (!verdicts.empty()) out << "\nverdicts (steps, A → B): " << absl::StrJoin(verdicts, ", ") << "\n";

  PrintRealised(d, out);

  out << "\nWHAT CHANGED (ms per step; adds up to the mean change, " << SignedMs(d.mean_delta_ns())
      << " ms)\n";
  for (const v1::Contribution& c : d.contributions()) {
    out << absl::StrFormat("  %8s  %-20s %s\n", SignedMs(c.delta_ns()), c.kind(),
                           c.kind() == "other" ? "" : c.subject());
    out << "            " << c.detail() << "\n";
  }
}

}  // namespace gpuspy::cli
