// The one palette of kernel classes (analysis/kernel_classifier.h: "gemm_tc", "elementwise", ...)
// for the "GPU time" bar. It sits beside the bars of the causes of a step's time, so no class
// takes a cause's colour (elementwise once took the sync-blocked red, and read as time lost).
// gpuspyd serves it inside /static/js/cause_colors.js (time_causes.h), so no copy lives in JS.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace gpuspy::palette {

struct KernelClassStyle {
  const char* key;    // the classifier's stable name: "gemm_tc"
  const char* label;  // what a tooltip says: "GEMM (tensor cores)"
  const char* color;
};

// Every class the classifier names, "other" last (also the style of a class not in the table).
std::span<const KernelClassStyle> KernelClassStyles();

// The style of `kernel_class`; "other"'s for a class not in the table (the HTML report).
const KernelClassStyle& StyleOfClass(std::string_view kernel_class);

// `export const KERNEL_CLASSES = ...;` for the generated module.
std::string KernelClassesJs();

}  // namespace gpuspy::palette
