// A process's stored batches as an analysis::BatchSource: what AnalyzeProcess reads when gpuspyd
// answers a query. Its NVTX steps are the ones ingest indexed as the batches arrived (by the same
// rule, analysis/step_finder.h); steps detected without NVTX are remembered in the query
// layer's cache until new batches arrive; a step's events count against the query's share of the
// analysis memory budget while it is analysed.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/batch_source.h"
#include "collector/query/analysis_budget.h"
#include "collector/query/analysis_cache.h"
#include "collector/query/event_reader.h"
#include "collector/storage/store.h"

namespace gpuspy::collector {

// What a step's events take in memory while it is analysed, per event (EventColumns: 40-64 B
// per event, plus the vectors' slack).
inline constexpr uint64_t kWindowBytesPerEvent = 64;

// Steps as the store keeps them, and back.
analysis::StepWindow ToStepWindow(const StepRecord& s);
StepRecord ToStepRecord(uint64_t process_id, const analysis::StepWindow& w);

class StoredBatches : public analysis::BatchSource {
 public:
  // What a source reads with besides the store; each optional.
  struct Options {
    AnalysisCache* cache = nullptr;             // remembers detected steps
    AnalysisBudget::Lease* lease = nullptr;     // charged with each step's events while read
    const std::atomic<bool>* cancelled = nullptr;  // true: reading every batch stops (CANCELLED)
  };

  // Everything must outlive this.
  StoredBatches(Store* store, EventReader* reader, const ProcessRecord& process, Options options)
      : store_(store), reader_(reader), process_(process), options_(options) {}

  // The steps ingest indexed (Store::ListSteps), possibly none.
  absl::StatusOr<std::optional<std::vector<analysis::StepWindow>>> IndexedNvtxSteps() override;
  std::optional<std::vector<analysis::StepWindow>> RememberedDetection() override;
  void RememberDetection(const std::vector<analysis::StepWindow>& steps) override;
  absl::Status ForEachBatch(Visit visit) override;
  absl::Status ForEachBatchIn(int64_t from_ns, int64_t to_ns, Visit visit) override;
  // Damaged stored batches are skipped, and the note counts them.
  absl::StatusOr<std::string> WithWindow(int64_t from_ns, int64_t to_ns, Visit use) override;

 private:
  Store* store_;
  EventReader* reader_;
  const ProcessRecord& process_;
  Options options_;
};

}  // namespace gpuspy::collector
