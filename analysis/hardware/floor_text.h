// The hardware floor in words, for the text screens (CLI, HTML report): one phrasing, so they
// read the same. The web viewer renders the same fields (step.js).
#pragma once

#include <string>
#include <vector>

#include "gpuspy/v1/report.pb.h"

namespace gpuspy::analysis {

// "floor 21.3 ms (GPU busy 30.1 ms); MFU 31% of the bf16 peak; 2.1 TFLOP from input shapes";
// "" when the step has no floor data at all.
std::string FloorLine(const v1::StepFloor& floor, int64_t wall_ns);

// One line per work bucket: "matmul on tensor cores bf16: 612 TFLOP/s (62% of peak), 25.0 ms,
// 40 ops"; "memory-bound fp32: 1.20 TB/s (36% of bandwidth), 8.0 ms, 310 ops".
std::vector<std::string> WorkLines(const v1::StepFloor& floor);

// The job's: "median MFU 31%, floor 21.3 ms of a 38.0 ms step, 612 TFLOP/s (12 steps with
// FLOPs; device NVIDIA H100 80GB HBM3)", or the note saying what would give FLOPs.
std::string JobFloorLine(const v1::JobFloor& floor);

// The counters' readings: "tensor pipes 61% busy, DRAM 18% of peak bandwidth, SMs 92% active,
// GPU 97% busy" (unmeasured readings left out); "" when none was measured.
std::string CounterReadingsText(const v1::CounterReadings& r);
// A step's counter lines: "counters (device 0, 100% of the step sampled): <readings>", then one
// per kernel class read on its own: "gemm_tc (12.0 ms sampled): <readings>". None without samples.
std::vector<std::string> CounterLines(const v1::StepFloor& floor);

// "matmul on tensor cores", "matmul on CUDA cores", "memory-bound".
std::string WorkKindName(v1::WorkKind kind);

}  // namespace gpuspy::analysis
