#include "analysis/evidence.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "model/units.h"

namespace gpuspy::analysis {
namespace {

std::string Sign(const Quantity& q) {
  if (q.value < 0) return "-";
  return q.show_sign ? "+" : "";
}

// Durations scale to their size: a 40 us gap is "40.0 us", not "0.0 ms".
std::string RenderNs(double ns) {
  char buf[32];
  if (ns >= 1e6) {
    std::snprintf(buf, sizeof(buf), "%.1f ms", ns / 1e6);
  } else if (ns >= 1e3) {
    std::snprintf(buf, sizeof(buf), "%.1f us", ns / 1e3);
  } else {
    std::snprintf(buf, sizeof(buf), "%.0f ns", ns);
  }
  return buf;
}

std::string Printf(const char* format, double v) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

}  // namespace

Quantity Ns(int64_t ns) { return {static_cast<double>(ns), "ns"}; }
Quantity SignedNs(int64_t ns) { return {static_cast<double>(ns), "ns", true}; }
Quantity Bytes(int64_t bytes) { return {static_cast<double>(bytes), "bytes"}; }
Quantity SignedBytes(int64_t bytes) { return {static_cast<double>(bytes), "bytes", true}; }
Quantity Count(uint64_t n) { return {static_cast<double>(n), "count"}; }
Quantity Fraction(double share) { return {share, "fraction"}; }
Quantity Ratio(double ratio) { return {ratio, "ratio"}; }
Quantity BytesPerSecond(double rate) { return {rate, "bytes_per_second"}; }

std::string Render(const Quantity& q) {
  const std::string unit = q.unit;
  const double magnitude = std::fabs(q.value);
  if (unit == "ns") return Sign(q) + RenderNs(magnitude);
  if (unit == "bytes") return Sign(q) + FormatBytes(static_cast<uint64_t>(std::llround(magnitude)));
  if (unit == "count") return Sign(q) + Printf("%.0f", magnitude);
  if (unit == "fraction") return Sign(q) + Printf("%.0f%%", magnitude * 100);
  if (unit == "ratio") return Sign(q) + Printf("%.2fx", magnitude);
  if (unit == "bytes_per_second") {
    return Sign(q) + Printf("%.1f GB/s", magnitude / 1e9);
  }
  return Sign(q) + Printf("%g", magnitude);
}

void AddEvidence(v1::Finding* f, const std::string& key, const Quantity& q,
                 std::string_view context) {
  AddEvidence(f, key, {}, q, context);
}

void AddEvidence(v1::Finding* f, const std::string& key, std::string_view before,
                 const Quantity& q, std::string_view after) {
  v1::Evidence* e = f->add_evidence();
  e->set_key(key);
  e->set_value(std::string(before) + Render(q) + std::string(after));
  e->set_quantity(q.value);
  e->set_unit(q.unit);
}

void AddEvidence(v1::Finding* f, const std::string& key, const std::string& text) {
  v1::Evidence* e = f->add_evidence();
  e->set_key(key);
  e->set_value(text);
}

void SetWhatIf(v1::Finding* f, const std::string& fix, int64_t base_ns, int64_t gain_ns) {
  const int64_t gain = std::clamp<int64_t>(gain_ns, 0, std::max<int64_t>(base_ns, 0));
  v1::WhatIf* w = f->mutable_what_if();
  w->set_fix(fix);
  w->set_step_ns(base_ns - gain);
  w->set_gain_ns(gain);
  w->set_gain_fraction(base_ns > 0 ? static_cast<double>(gain) / static_cast<double>(base_ns) : 0.0);
}

}  // namespace gpuspy::analysis
