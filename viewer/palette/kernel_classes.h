// The one palette and the names of the kernel classes a step's GPU time is made of
// (KernelClassTime.kernel_class, analysis/kernel_classifier.cc): the web viewer's GPU-time bar
// and the HTML report's draw from this table, served to the viewer in the generated
// cause_colors.js module (time_causes.h), so no copy exists in JavaScript. Communication keeps
// the comm brown of the time causes: the same colour says "communication" everywhere.
#pragma once

#include <span>
#include <string_view>

namespace gpuspy::palette {

struct KernelClassStyle {
  const char* key;    // "gemm_tc": KernelClassTime.kernel_class
  const char* label;  // "GEMM (tensor cores)"
  const char* color;
};

std::span<const KernelClassStyle> KernelClassStyles();

// The style of `kernel_class`; "other"'s for a class not in the table.
const KernelClassStyle& StyleOfClass(std::string_view kernel_class);

}  // namespace gpuspy::palette
