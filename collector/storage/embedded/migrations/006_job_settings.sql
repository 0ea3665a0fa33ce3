-- v6: what a job carries of its own, apart from its processes: the RE2 pattern its NVTX steps are
-- found with (`gpuspy jobs set-step-pattern`, `gpuspy import --step-pattern`), in place of
-- gpuspyd's --step-pattern. A job without a row uses the daemon's; data dirs from before have none.
CREATE TABLE job_settings (
  job_id TEXT PRIMARY KEY,
  step_pattern TEXT NOT NULL
);
