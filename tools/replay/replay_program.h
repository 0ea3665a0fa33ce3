// gpuspy-replay, all of it but main(): a library file, so that it is compiled with the common
// precompiled header (the standard library, abseil, gpuspy.v1) rather than parsing them alone in
// the executable's one file (bench/results/first-run-2026-11-28.md).
#pragma once

namespace gpuspy::replay {

// Parses the command line and replays the synthetic job; the process's exit status.
int RunReplay(int argc, char** argv);

}  // namespace gpuspy::replay
