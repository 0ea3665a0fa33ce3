// The arithmetic and memory traffic of a PyTorch op from what its profiler event carries: the
// `flops` arg (with_flops=True) when present, else the op's input shapes and types
// (record_shapes=True) through the formulas below. docs/hardware-floor.md says where each
// figure comes from and its error.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "model/events.h"

namespace gpuspy::importers {

// An op's inputs as the profiler lists them: each input's dims (empty for a scalar or a list)
// and its type name ("float", "c10::BFloat16", "Scalar", "").
struct OpInputs {
  std::span<const int64_t> dims;       // every input's dims, one after the other
  std::span<const uint32_t> dim_ends;  // input i's dims are dims[dim_ends[i-1], dim_ends[i])
  std::span<const std::string_view> types;

  size_t size() const { return dim_ends.size(); }
  std::span<const int64_t> Dims(size_t i) const {
    const uint32_t from = i == 0 ? 0 : dim_ends[i - 1];
    return dims.subspan(from, dim_ends[i] - from);
  }
  std::string_view Type(size_t i) const { return i < types.size() ? types[i] : std::string_view(); }
};

struct OpWorkFigures {
  uint64_t flops = 0;
  uint64_t bytes = 0;
  std::string_view dtype;  // the type its math runs in (the first floating-point input's)
  WorkSource source = WorkSource::kUnknown;
};

// Whether an op of this name can have work figures: reading its shapes is worth it.
bool IsWorkOp(std::string_view op);

// The figures of op `op`, or nullopt when neither its `flops` arg (`flops_arg`, the arg's text,
// empty when absent) nor its shapes give any. Pure: no state, no allocation.
std::optional<OpWorkFigures> OpWorkOf(std::string_view op, std::string_view flops_arg,
                                      const OpInputs& inputs);

}  // namespace gpuspy::importers
