#include "collector/query/analysis_budget.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace gpuspy::collector {
namespace {

uint64_t Mb(uint64_t bytes) { return (bytes + (1 << 20) - 1) >> 20; }

}  // namespace

absl::Status AnalysisBudget::Lease::Add(uint64_t bytes) {
  AnalysisBudget& b = *budget_;
  if (bytes == 0) return absl::OkStatus();
  std::lock_guard lock(b.mu_);
  const uint64_t in_flight = b.in_flight_.load() + bytes;
  const bool alone = b.in_flight_.load() == bytes_;  // no other query holds memory
  if (b.budget_ > 0) {
    if (in_flight > b.budget_ && !alone) {
      b.refusals_.fetch_add(1);
      return absl::ResourceExhaustedError(absl::StrCat(
          "analysis memory is exhausted: queries in progress hold ", Mb(b.in_flight_.load()),
          " MB and this one needs ", Mb(bytes_ + bytes), " MB of the ", Mb(b.budget_),
          " MB of --analysis-cache-mb; try again when they finish, or raise --analysis-cache-mb"));
    }
    // Cached analyses make room for work in progress.
    b.cache_->EvictDownTo(in_flight >= b.budget_ ? 0 : b.budget_ - in_flight);
  }
  b.in_flight_.fetch_add(bytes);
  bytes_ += bytes;
  return absl::OkStatus();
}

void AnalysisBudget::Lease::Release(uint64_t bytes) {
  bytes = std::min(bytes, bytes_);
  if (bytes == 0) return;
  std::lock_guard lock(budget_->mu_);
  budget_->in_flight_.fetch_sub(bytes);
  bytes_ -= bytes;
}

}  // namespace gpuspy::collector
