// malloc settings for the commands that read trace files in one go (analyze, diff, import): a
// short-lived batch process that allocates and frees the same sizes over and over (each step's
// analysis, each sort's buffer) and exits soon after.
#pragma once

namespace gpuspy::cli {

// Keeps memory malloc is given back for its next use instead of returning it to the system, and
// serves blocks up to 32 MiB from the heap rather than from mappings of their own: a fresh page
// costs a fault each time (on the VM the benchmarks run on, faults were ~9% of a 207 MB trace's
// read, and these settings took 5-7% off its time: bench/results/offline-analyze-2026-12-07-3.md).
// The peak is unchanged, as what is kept is what the run reuses. Not for gpuspyd, which lives on
// and should hand memory back. Called once, before the first trace is read; a no-op off glibc.
void KeepFreedMemoryForReuse();

}  // namespace gpuspy::cli
