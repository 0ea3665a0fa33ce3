// Huge pages for the offline commands' heap. `gpuspy analyze` / `diff` / `import` hold a trace's
// events in a few vectors of tens to hundreds of MB; with transparent huge pages on "madvise"
// (Debian's default) malloc's memory is faulted in 4 KiB at a time, and on a VM a fault is
// microseconds: a 207 MB gzip'd trace took 1.28 s, 0.79 s with huge pages (bench/results/
// offline-analyze-2026-12-02.md). glibc (2.35+) madvises its own mappings when its tunable
// glibc.malloc.hugetlb=1 is set, and reads tunables only when a process starts: so these commands
// execute themselves once more with it. Nothing else changes: same arguments, same pid, and
// these commands start no other program that would inherit the setting.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpuspy::cli {

// The subcommand of a gpuspy command line (`gpuspy --json analyze a.json` -> "analyze"), skipping
// the global options and their values; "" when there is none.
std::string SubcommandOf(const std::vector<std::string>& args);

// Files this large in all are worth the second start (~15 ms of loading the program again: a
// 2 MB trace pair took 0.07 s, 0.09 s with it).
inline constexpr uint64_t kMinHugePageInputBytes = 8u << 20;

// Whether a command line should run again with malloc's huge pages: an offline command whose
// files (`input_bytes`, on disk) are at least kMinHugePageInputBytes, the kernel's THP mode
// "madvise" (with "always" malloc has them already; with "never" nobody does), no GLIBC_TUNABLES
// of the user's (never overridden) and no GPUSPY_NO_HUGE_PAGES.
bool WantsHugePageMalloc(const std::vector<std::string>& args, uint64_t input_bytes,
                         const std::string& thp_mode, const char* glibc_tunables, const char* opt_out);

// Executes /proc/self/exe with glibc.malloc.hugetlb=1 when WantsHugePageMalloc; returns when it
// does not, or when the exec fails (then the command runs as it is).
void ReexecWithHugePageMallocIfUseful(int argc, char** argv);

}  // namespace gpuspy::cli
