// A finding's evidence as data: a measured fact is a number with a unit, and its text is
// rendered from that number here and nowhere else, so what a script reads (quantity, unit) and
// what a person reads (value) cannot disagree (issue 21: "finding evidence is structured and the
// text is rendered from it"). Facts that are not numbers (kernel names, call sites) stay text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gpuspy/v1/report.pb.h"

namespace gpuspy::analysis {

// Where a finding's fix names the job (a command to run) before the job is known: the job-level
// pass (job_analysis.h) writes the job's id in its place.
inline constexpr char kJobPlaceholder[] = "<job>";

// A measured quantity and how to show it. The unit strings are the values of v1::Evidence.unit.
struct Quantity {
  double value = 0;
  const char* unit = "";
  bool show_sign = false;  // "+1.2 ms": a difference against a reference
};

Quantity Ns(int64_t ns);                  // "850 ns", "12.3 us", "4.6 ms"
Quantity SignedNs(int64_t ns);            // "+4.6 ms", "-0.3 ms"
Quantity Bytes(int64_t bytes);            // "512 B", "1.5 GiB"
Quantity SignedBytes(int64_t bytes);      // "+64.0 MiB"
Quantity Count(uint64_t n);               // "42"
Quantity Fraction(double share);          // "37%"
Quantity Ratio(double ratio);             // "2.40x"
Quantity BytesPerSecond(double rate);     // "12.3 GB/s"

// The one text of a quantity.
std::string Render(const Quantity& q);

// Evidence that is a measured quantity: value = Render(q) followed by `context` (e.g. " (3
// calls)"), quantity and unit set.
void AddEvidence(v1::Finding* f, const std::string& key, const Quantity& q,
                 std::string_view context = {});
// The same with text before the quantity too: "cudaStreamSynchronize x3 = " + "18.1 ms".
void AddEvidence(v1::Finding* f, const std::string& key, std::string_view before,
                 const Quantity& q, std::string_view after = {});
// Evidence that is text only (a kernel name, a call site, a cause): no quantity, no unit.
void AddEvidence(v1::Finding* f, const std::string& key, const std::string& text);
// The finding's what-if from a step of `base_ns` that `fix` shortens by `gain_ns` (clamped to
// [0, base_ns]): step_ns, gain_ns and gain_fraction always agree.
void SetWhatIf(v1::Finding* f, const std::string& fix, int64_t base_ns, int64_t gain_ns);

}  // namespace gpuspy::analysis
