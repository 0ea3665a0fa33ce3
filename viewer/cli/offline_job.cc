#include "viewer/cli/offline_job.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "absl/strings/str_cat.h"
#include "analysis/process_analysis.h"
#include "importers/kineto/steady_now.h"
#include "importers/kineto/trace_rank.h"
#include "viewer/cli/batch_malloc.h"
#include "viewer/cli/progress_line.h"

namespace gpuspy::cli {

bool OfflineJob::any_failed() const {
  return std::any_of(files.begin(), files.end(), [](const OfflineFile& f) { return !f.status.ok(); });
}

OfflineJob LoadOfflineJob(const std::vector<std::string>& paths, const std::string& job,
                          unsigned threads, bool progress, const std::string& step_pattern,
                          const importers::KinetoReadLimits& limits, EventsAfterAnalysis events) {
  KeepFreedMemoryForReuse();
  OfflineJob out;
  out.job = job;
  const size_t n = paths.size();
  out.files.resize(n);
  std::vector<std::vector<analysis::StepAnalysis>> steps(n);
  // What the job-level checks and the process list need of each file's events, taken before they
  // may be dropped.
  std::vector<importers::RankedFile> rank_of(n);
  std::vector<size_t> event_counts(n);
  std::atomic<size_t> next{0}, done{0};
  ProgressLine line(progress);
  // "importing" when this is `import --offline` reads the same way: the file is being read.
  auto files_done = [&] { return n > 1 ? absl::StrCat(" (", done.load(), " of ", n, " files done)") : std::string(); };
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const unsigned budget = threads > 0 ? threads : cores;
  const size_t pool_size = std::min<size_t>(n, budget);
  // Fewer files than threads: the spare threads analyse a file's steps alongside (one trace on
  // two cores: its analysis in half the time).
  const unsigned step_threads = std::max<unsigned>(1, budget / static_cast<unsigned>(std::max<size_t>(1, pool_size)));
  // Each file is read and analysed on its own: ranks share nothing until the job-level step.
  auto work = [&] {
    // The columns of this thread's last file, once its events are dropped: the next file's fill them.
    EventColumns spare;
    for (size_t i = next++; i < n; i = next++) {
      OfflineFile& f = out.files[i];
      f.path = paths[i];
      const std::string name = std::filesystem::path(paths[i]).filename().string();
      importers::KinetoReadLimits mine = limits;
      mine.progress = [&](uint64_t read, uint64_t total) {
        line.Show(ProgressText("reading " + name, read, total, ProgressUnit::kBytes) + files_done());
      };
      absl::StatusOr<importers::KinetoTrace> t =
          importers::ReadKinetoTrace(paths[i], &f.timings, mine, &spare);
      if (!t.ok()) {
        f.status = t.status();
      } else {
        f.trace = std::move(*t);
        line.Show("analysing " + name + files_done(), /*phase=*/true);
        const int64_t start = importers::SteadyNowNs();
        // The process id the collector would give: position among the files, from 1.
        steps[i] = analysis::AnalyzeProcessSteps(analysis::CutIntoImportBatches(f.trace->events),
                                                 f.trace->strings, i + 1, step_pattern, step_threads);
        f.analyse_ns = importers::SteadyNowNs() - start;
        rank_of[i] = importers::RankOf(f.path, i, *f.trace);
        event_counts[i] = f.trace->events.size();
        if (events == EventsAfterAnalysis::kDrop) {
          spare = std::move(f.trace->events);
          // Only the events' readers need these (the steps copied what they keep).
          f.trace->strings = StringTable();
          f.trace->thread_names.clear();
        }
      }
      ++done;
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < pool_size; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  line.Clear();

  // As `gpuspy import`: a trace without distributedInfo has the rank its file name says, else
  // that of its position; a file that cannot be one more rank of this job (the same rank twice,
  // or no rank and another run's process or time) is refused.
  std::vector<importers::RankedFile> ranked;
  for (size_t i = 0; i < n; ++i) {
    OfflineFile& f = out.files[i];
    if (!f.trace) continue;
    importers::RankedFile r = std::move(rank_of[i]);
    if (std::optional<std::string> why = importers::NotOneJobWith(ranked, r)) {
      f.status = absl::InvalidArgumentError(*why);
      f.trace.reset();
      continue;
    }
    f.trace->identity.set_rank(r.rank);
    ranked.push_back(std::move(r));
  }
  for (size_t i = 0; i < n; ++i) {
    OfflineFile& f = out.files[i];
    if (!f.trace) continue;
    const uint64_t process_id = i + 1;
    v1::ProcessIdentity& id = f.trace->identity;
    id.set_job_id(job);
    id.set_host("import");
    id.set_source("import");
    const bool gpu = id.devices_size() > 0;
    out.processes.push_back({process_id, id.rank(), id.world_size(), id.clock_offset_ns(),
                             id.host(), event_counts[i], gpu ? id.devices(0).name() : "",
                             gpu ? id.devices(0).global_memory_bytes() : 0});
    out.steps[process_id] = std::move(steps[i]);
    out.labels[process_id] = std::to_string(id.rank());
  }
  if (!out.processes.empty()) {
    const int64_t start = importers::SteadyNowNs();
    analysis::AnalyzeJobSteps(job, out.processes, &out.steps);
    out.job_ns = importers::SteadyNowNs() - start;
  }
  return out;
}

}  // namespace gpuspy::cli
