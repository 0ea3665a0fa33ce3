#include "viewer/cli/offline_job.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "analysis/process_analysis.h"
#include "importers/kineto/trace_rank.h"

namespace gpuspy::cli {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

bool OfflineJob::any_failed() const {
  return std::any_of(files.begin(), files.end(), [](const OfflineFile& f) { return !f.status.ok(); });
}

std::string JobFromFile(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  return name.substr(0, name.find('.'));
}

OfflineJob LoadOfflineJob(const std::vector<std::string>& paths, const std::string& job,
                          unsigned threads, bool progress, const std::string& step_pattern,
                          const importers::KinetoReadLimits& limits) {
  OfflineJob out;
  out.job = job;
  const size_t n = paths.size();
  out.files.resize(n);
  std::vector<std::vector<analysis::StepAnalysis>> steps(n);
  std::atomic<size_t> next{0}, done{0};
  // Each file is read and analysed on its own: ranks share nothing until the job-level step.
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) {
      OfflineFile& f = out.files[i];
      f.path = paths[i];
      absl::StatusOr<importers::KinetoTrace> t = importers::ReadKinetoTrace(paths[i], &f.timings, limits);
      if (!t.ok()) {
        f.status = t.status();
      } else {
        f.trace = std::move(*t);
        const int64_t start = NowNs();
        // The process id the collector would give: position among the files, from 1.
        steps[i] = analysis::AnalyzeProcessSteps(analysis::CutIntoImportBatches(f.trace->events),
                                                 f.trace->strings, i + 1, step_pattern);
        f.analyse_ns = NowNs() - start;
      }
      const size_t d = ++done;
      if (progress) std::fprintf(stderr, "\rgpuspy: %zu/%zu files analysed", d, n);
    }
  };
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t pool_size = std::min<size_t>(n, threads > 0 ? threads : cores);
  std::vector<std::thread> pool;
  for (size_t t = 1; t < pool_size; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (progress) std::fprintf(stderr, "\n");

  // As `gpuspy import`: a trace without distributedInfo has the rank its file name says, else
  // that of its position; a file that cannot be one more rank of this job (the same rank twice,
  // or no rank and another run's process or time) is refused.
  std::vector<importers::RankedFile> ranked;
  for (size_t i = 0; i < n; ++i) {
    OfflineFile& f = out.files[i];
    if (!f.trace) continue;
    importers::RankedFile r = importers::RankOf(f.path, i, *f.trace);
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
    out.processes.push_back({process_id, id.rank(), id.world_size(), id.clock_offset_ns(),
                             id.host(), f.trace->events.size()});
    out.steps[process_id] = std::move(steps[i]);
    out.labels[process_id] = std::to_string(id.rank());
  }
  if (!out.processes.empty()) {
    const int64_t start = NowNs();
    analysis::AnalyzeJobSteps(job, out.processes, &out.steps);
    out.job_ns = NowNs() - start;
  }
  return out;
}

}  // namespace gpuspy::cli
