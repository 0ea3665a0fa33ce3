// Which CUDA 13 record struct the parser reads each activity kind as: one table, used by the
// parser's casts and checked by the real-CUPTI oracle (tests/unit/real_cupti_layout_test.cc).
//
// Why a table: CUPTI versions its records (Kernel9 -> Kernel10 ...) and the library writes the
// newest version it knows, while the parser reads the version of the header it was compiled with.
// If the two differ, every field after the first changed one is garbage and the walker steps by a
// different size. Only libcupti knows which version it writes, so the oracle walks buffers with
// the real library and compares its stride with `bytes` below.
#pragma once

#include <cupti.h>

#include <cstddef>
#include <type_traits>

namespace gpuspy::inject {

template <CUpti_ActivityKind K>
struct RecordFor;

#define GPUSPY_RECORD_FOR(kind, type) \
  template <>                         \
  struct RecordFor<kind> {            \
    using Type = type;                \
  }
GPUSPY_RECORD_FOR(CUPTI_ACTIVITY_KIND_KERNEL, CUpti_ActivityKernel10);
GPUSPY_RECORD_FOR(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUpti_ActivityKernel10);
GPUSPY_RECORD_FOR(CUPTI_ACTIVITY_KIND_MEMCPY, CUpti_ActivityMemcpy6);
GPUSPY_RECORD_FOR(CUPTI_ACTIVITY_KIND_MEMCPY2, CUpti_ActivityMemcpyPtoP4);
GPUSPY_RECORD_FOR(CUPTI_ACTIVITY_KIND_MEMSET, CUpti_ActivityMemset4);
GPUSPY_RECORD_FOR(CUPTI_ACTIVITY_KIND_RUNTIME, CUpti_ActivityAPI);
GPUSPY_RECORD_FOR(CUPTI_ACTIVITY_KIND_DRIVER, CUpti_ActivityAPI);
GPUSPY_RECORD_FOR(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUpti_ActivitySynchronization2);
GPUSPY_RECORD_FOR(CUPTI_ACTIVITY_KIND_MEMORY2, CUpti_ActivityMemory4);
GPUSPY_RECORD_FOR(CUPTI_ACTIVITY_KIND_MARKER, CUpti_ActivityMarker2);
GPUSPY_RECORD_FOR(CUPTI_ACTIVITY_KIND_OVERHEAD, CUpti_ActivityOverhead3);
GPUSPY_RECORD_FOR(CUPTI_ACTIVITY_KIND_GRAPH_TRACE, CUpti_ActivityGraphTrace2);
GPUSPY_RECORD_FOR(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUpti_ActivityExternalCorrelation);
GPUSPY_RECORD_FOR(CUPTI_ACTIVITY_KIND_MEMORY_POOL, CUpti_ActivityMemoryPool3);
GPUSPY_RECORD_FOR(CUPTI_ACTIVITY_KIND_DEVICE, CUpti_ActivityDevice5);
GPUSPY_RECORD_FOR(CUPTI_ACTIVITY_KIND_CONTEXT, CUpti_ActivityContext3);
#undef GPUSPY_RECORD_FOR

// The parser handles these pairs in one case each.
static_assert(std::is_same_v<RecordFor<CUPTI_ACTIVITY_KIND_KERNEL>::Type,
                             RecordFor<CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL>::Type>);
static_assert(std::is_same_v<RecordFor<CUPTI_ACTIVITY_KIND_RUNTIME>::Type,
                             RecordFor<CUPTI_ACTIVITY_KIND_DRIVER>::Type>);

// The record behind `r`, read as the struct the table names for K.
template <CUpti_ActivityKind K>
const typename RecordFor<K>::Type& As(const CUpti_Activity* r) {
  return *reinterpret_cast<const typename RecordFor<K>::Type*>(r);
}

struct ParsedKind {
  CUpti_ActivityKind kind;
  size_t bytes;  // sizeof the struct the parser reads it as
  const char* name;
};

#define GPUSPY_PARSED(kind) {kind, sizeof(RecordFor<kind>::Type), #kind}
// Every kind ActivityParser::ParseRecord turns into an event or into state it keeps.
inline constexpr ParsedKind kParsedKinds[] = {
    GPUSPY_PARSED(CUPTI_ACTIVITY_KIND_KERNEL),
    GPUSPY_PARSED(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
    GPUSPY_PARSED(CUPTI_ACTIVITY_KIND_MEMCPY),
    GPUSPY_PARSED(CUPTI_ACTIVITY_KIND_MEMCPY2),
    GPUSPY_PARSED(CUPTI_ACTIVITY_KIND_MEMSET),
    GPUSPY_PARSED(CUPTI_ACTIVITY_KIND_RUNTIME),
    GPUSPY_PARSED(CUPTI_ACTIVITY_KIND_DRIVER),
    GPUSPY_PARSED(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION),
    GPUSPY_PARSED(CUPTI_ACTIVITY_KIND_MEMORY2),
    GPUSPY_PARSED(CUPTI_ACTIVITY_KIND_MARKER),
    GPUSPY_PARSED(CUPTI_ACTIVITY_KIND_OVERHEAD),
    GPUSPY_PARSED(CUPTI_ACTIVITY_KIND_GRAPH_TRACE),
    GPUSPY_PARSED(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION),
    GPUSPY_PARSED(CUPTI_ACTIVITY_KIND_MEMORY_POOL),
    GPUSPY_PARSED(CUPTI_ACTIVITY_KIND_DEVICE),
    GPUSPY_PARSED(CUPTI_ACTIVITY_KIND_CONTEXT),
};
#undef GPUSPY_PARSED

}  // namespace gpuspy::inject
