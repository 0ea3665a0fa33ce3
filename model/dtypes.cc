#include "model/dtypes.h"

#include <array>
#include <utility>

namespace gpuspy {
namespace {

// c10::ScalarType names. Sub-byte packed types (QUInt4x2, Bits1x8, ...) are left out: a size
// per element would be wrong for them, and unknown (0) is honest.
constexpr std::array<std::pair<std::string_view, uint32_t>, 27> kSizes = {{
    {"Byte", 1},           {"Char", 1},              {"Bool", 1},
    {"Short", 2},          {"Int", 4},               {"Long", 8},
    {"UInt16", 2},         {"UInt32", 4},            {"UInt64", 8},
    {"Half", 2},           {"BFloat16", 2},          {"Float", 4},
    {"Double", 8},         {"ComplexHalf", 4},       {"ComplexFloat", 8},
    {"ComplexDouble", 16}, {"QInt8", 1},             {"QUInt8", 1},
    {"QInt32", 4},         {"Bits8", 1},             {"Bits16", 2},
    {"Float8_e5m2", 1},    {"Float8_e4m3fn", 1},     {"Float8_e5m2fnuz", 1},
    {"Float8_e4m3fnuz", 1}, {"Float8_e8m0fnu", 1},   {"Float4_e2m1fn_x2", 1},
}};

// The same types as the profiler's "Input type" arg writes them (C++ type names).
constexpr std::array<std::pair<std::string_view, uint32_t>, 16> kProfilerSizes = {{
    {"float", 4},         {"double", 8},          {"c10::Half", 2},
    {"c10::BFloat16", 2}, {"long int", 8},        {"int", 4},
    {"short int", 2},     {"bool", 1},            {"unsigned char", 1},
    {"signed char", 1},   {"c10::Float8_e4m3fn", 1}, {"c10::Float8_e5m2", 1},
    {"c10::Float8_e4m3fnuz", 1}, {"c10::Float8_e5m2fnuz", 1}, {"c10::complex<float>", 8},
    {"c10::complex<double>", 16},
}};

// Short names for reports, by either spelling.
constexpr std::array<std::pair<std::string_view, std::string_view>, 22> kShortNames = {{
    {"Float", "fp32"},     {"float", "fp32"},          {"Double", "fp64"},
    {"double", "fp64"},    {"Half", "fp16"},           {"c10::Half", "fp16"},
    {"BFloat16", "bf16"},  {"c10::BFloat16", "bf16"},  {"Float8_e4m3fn", "fp8"},
    {"c10::Float8_e4m3fn", "fp8"}, {"Float8_e5m2", "fp8"}, {"c10::Float8_e5m2", "fp8"},
    {"Float8_e4m3fnuz", "fp8"}, {"c10::Float8_e4m3fnuz", "fp8"}, {"Float8_e5m2fnuz", "fp8"},
    {"c10::Float8_e5m2fnuz", "fp8"}, {"Char", "int8"}, {"signed char", "int8"},
    {"Byte", "uint8"},     {"unsigned char", "uint8"}, {"Long", "int64"},
    {"long int", "int64"},
}};

}  // namespace

uint32_t DtypeSize(std::string_view dtype) {
  for (const auto& [name, size] : kSizes) {
    if (name == dtype) return size;
  }
  for (const auto& [name, size] : kProfilerSizes) {
    if (name == dtype) return size;
  }
  return 0;
}

std::string_view DtypeShortName(std::string_view dtype) {
  for (const auto& [name, short_name] : kShortNames) {
    if (name == dtype) return short_name;
  }
  return dtype;
}

}  // namespace gpuspy
