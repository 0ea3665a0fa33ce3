// What a step computed, from the op work its trace carries (OpWorkEvent): each op's FLOPs and
// bytes with the GPU time of the kernels it launched, summed by kind of math and data type. Pure
// and device-free: step_floor.h sets it against a device's peaks.
#pragma once

#include "analysis/kernel_classes.h"
#include "analysis/step_segmenter.h"
#include "gpuspy/v1/report.pb.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::analysis {

// The step's work buckets, flops, flops_source, covered_kernel_ns, the achieved rates, and a
// note saying what would give FLOPs when nothing does; gpu_busy_ns from `gpu_busy_ns`. An op
// counts in the step its range starts in; of nested ops with work (aten::scaled_dot_product_attention
// around aten::_scaled_dot_product_flash_attention) only the outermost counts; an op whose launch
// calls started no kernel (a CPU tensor's op) counts nowhere.
v1::StepFloor MeasureStepWork(const EventColumns& events, const StringTable& strings,
                              const StepWindow& step, int64_t gpu_busy_ns, KernelClasses& classes);

}  // namespace gpuspy::analysis
