// The fake GPU's performance monitor (CUPTI PM sampling and the profiler host API's subset that
// goes with it): samples computed from the simulated kernels' spans and the counter profile each
// kernel was launched with (fake_gpu_kernel_counters).
#pragma once

#include <cstdint>

namespace fake_cupti {

// A kernel runs on the simulated GPU over [start, end): remembered for the samples that cover it
// (while sampling is off, for a second).
void PmRecordKernel(uint64_t start, uint64_t end);
// fake_cupti_reset_for_tests: sampling stopped, the object disabled, no spans, no profile.
void PmResetForTests();

}  // namespace fake_cupti
