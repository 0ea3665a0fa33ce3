#include "analysis/diff/realised_gain.h"

#include <algorithm>
#include <map>
#include <vector>

namespace gpuspy::analysis {
namespace {

double Share(uint32_t part, uint32_t whole) {
  return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
}

// What a detector's findings cost per step over a side's compared steps: the median where it is
// found, weighted by how often it is. Both sides are measured the same way, so a finding in
// every step of both is "the same" however its median falls.
double LossPerStep(const v1::FindingProfile& f, uint32_t steps) {
  return Share(f.steps(), steps) * static_cast<double>(f.median_lost_ns());
}

// Gone from B, or most of it gone: its loss per step at most kMaxRemainingShare of A's, and
// either no longer a trait of B or at most that share of A's median where B still has it. The
// second condition keeps a finding of every step that B has in half of its few steps (2 steps,
// one with the same 100 ms exposed communication) from reading as fixed.
bool Fixed(const v1::FindingProfile& in_a, const v1::FindingProfile* in_b, const v1::RunProfile& a,
           const v1::RunProfile& b) {
  if (in_b == nullptr) return true;
  const bool less_per_step =
      LossPerStep(*in_b, b.steps()) <= kMaxRemainingShare * LossPerStep(in_a, a.steps());
  const bool no_longer_a_trait = Share(in_b->steps(), b.steps()) < kMinShareInA;
  const bool smaller_where_found = static_cast<double>(in_b->median_lost_ns()) <=
                                   kMaxRemainingShare * static_cast<double>(in_a.median_lost_ns());
  return less_per_step && (no_longer_a_trait || smaller_where_found);
}

double Fraction(int64_t realised, int64_t predicted) {
  return predicted <= 0 ? 0.0 : static_cast<double>(realised) / static_cast<double>(predicted);
}

}  // namespace

void AddRealisedGains(const v1::RunProfile& a, const v1::RunProfile& b, v1::RunDiff* d) {
  std::map<v1::Detector, const v1::FindingProfile*> in_b;
  for (const v1::FindingProfile& f : b.findings()) in_b[f.detector()] = &f;
  const int64_t realised = d->a().median_ns() - d->b().median_ns();
  const v1::Detector new_primary =
      b.verdicts().empty() ? v1::DETECTOR_UNSPECIFIED : b.verdicts(0).detector();

  // Whether every fix A's replay rated is among the fixed: then A's "all fixes together" replay
  // is the prediction for what B did, not only a bound on it.
  bool every_replayed_fix_fixed = true;
  int64_t predicted_sum = 0;
  for (const v1::FindingProfile& f : a.findings()) {
    const auto it = in_b.find(f.detector());
    const v1::FindingProfile* other = it == in_b.end() ? nullptr : it->second;
    const bool fixed = Fixed(f, other, a, b);
    if (!fixed && f.replayed_steps() > 0) every_replayed_fix_fixed = false;
    const double a_share = Share(f.steps(), a.steps());
    if (!fixed || a_share < kMinShareInA || f.median_lost_ns() < kMinPredictedGainNs) continue;
    v1::RealisedGain* g = d->add_realised();
    g->set_detector(f.detector());
    g->set_predicted_gain_ns(f.median_lost_ns());
    g->set_predicted_by_replay(Share(f.replayed_steps(), f.steps()) >= kMinReplayedShare);
    g->set_a_present_share(a_share);
    g->set_realised_gain_ns(realised);
    g->set_realised_fraction(Fraction(realised, f.median_lost_ns()));
    g->set_still_present_share(other == nullptr ? 0.0 : Share(other->steps(), b.steps()));
    g->set_b_median_lost_ns(other == nullptr ? 0 : other->median_lost_ns());
    g->set_new_primary(new_primary);
    predicted_sum += f.median_lost_ns();
  }
  // a.findings() is most lost first: the realised list already is.
  if (d->realised_size() < 2) return;
  v1::RealisedTogether* t = d->mutable_realised_together();
  t->set_fixes(static_cast<uint32_t>(d->realised_size()));
  const bool replayed_together = every_replayed_fix_fixed && a.replayed_steps() > 0;
  t->set_predicted_gain_ns(replayed_together ? a.median_all_fixes_gain_ns() : predicted_sum);
  t->set_predicted_basis(replayed_together ? "all_fixes_replay" : "sum");
  t->set_realised_gain_ns(realised);
  t->set_realised_fraction(Fraction(realised, t->predicted_gain_ns()));
}

}  // namespace gpuspy::analysis
