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

}  // namespace

uint32_t DtypeSize(std::string_view dtype) {
  for (const auto& [name, size] : kSizes) {
    if (name == dtype) return size;
  }
  return 0;
}

}  // namespace gpuspy
