// gpuspy's own event model: plain structs, no CUPTI and no protobuf, so the inject core and the
// collector's analysis share one vocabulary without depending on each other.
//
// A ProcessEvents holds one process's events column-wise by kind (as CUPTI delivers them and as
// the wire carries them) plus the dictionary that resolves their string refs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpuspy {

// Enums mirror gpuspy.v1 (events.proto) value for value; codec/ static_asserts this.
enum class CopyKind : uint8_t { kUnknown = 0, kHtoD = 1, kDtoH = 2, kDtoD = 3, kHtoH = 4, kPtoP = 5 };
enum class MemoryKind : uint8_t {
  kUnknown = 0, kPageable = 1, kPinned = 2, kDevice = 3, kManaged = 4, kArray = 5
};
enum class SyncKind : uint8_t {
  kUnknown = 0, kEvent = 1, kStreamWaitEvent = 2, kStream = 3, kContext = 4
};
enum class MemoryOpKind : uint8_t { kUnknown = 0, kAlloc = 1, kFree = 2 };
enum class ApiDomain : uint8_t { kUnknown = 0, kRuntime = 1, kDriver = 2 };
// kUsage: a caching allocator's usage sample (size = reserved, utilized_bytes = allocated), from
// PyTorch profiler [memory] events; the others are CUDA pool (cudaMallocAsync) operations.
enum class PoolOpKind : uint8_t {
  kUnknown = 0, kCreated = 1, kDestroyed = 2, kTrimmed = 3, kUsage = 4
};

// Refs index the process dictionary (Dictionary below). 0 means "none".
using StringRef = uint32_t;

struct StreamKey {
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = 0;
  friend bool operator==(const StreamKey&, const StreamKey&) = default;
  friend auto operator<=>(const StreamKey&, const StreamKey&) = default;
};

struct LaunchShape {
  uint32_t grid_x = 0, grid_y = 0, grid_z = 0;
  uint32_t block_x = 0, block_y = 0, block_z = 0;
  uint32_t registers_per_thread = 0;
  uint32_t static_shared_bytes = 0;
  uint32_t dynamic_shared_bytes = 0;
  friend bool operator==(const LaunchShape&, const LaunchShape&) = default;
};

struct KernelEvent {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t correlation_id = 0;
  StringRef name = 0;
  StreamKey stream;
  LaunchShape shape;
  uint32_t graph_id = 0;
  friend bool operator==(const KernelEvent&, const KernelEvent&) = default;
};

struct MemcpyEvent {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t correlation_id = 0;
  StreamKey stream;
  CopyKind copy_kind = CopyKind::kUnknown;
  MemoryKind src_kind = MemoryKind::kUnknown;
  MemoryKind dst_kind = MemoryKind::kUnknown;
  bool async = false;
  uint64_t bytes = 0;
  uint32_t src_device_id = 0;
  uint32_t dst_device_id = 0;
  friend bool operator==(const MemcpyEvent&, const MemcpyEvent&) = default;
};

struct MemsetEvent {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t correlation_id = 0;
  StreamKey stream;
  MemoryKind memory_kind = MemoryKind::kUnknown;
  bool async = false;
  uint64_t bytes = 0;
  uint32_t value = 0;
  friend bool operator==(const MemsetEvent&, const MemsetEvent&) = default;
};

struct SyncEvent {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t correlation_id = 0;
  StreamKey stream;
  SyncKind sync_kind = SyncKind::kUnknown;
  friend bool operator==(const SyncEvent&, const SyncEvent&) = default;
};

struct MemoryEvent {
  int64_t timestamp_ns = 0;
  uint64_t correlation_id = 0;
  StreamKey stream;
  MemoryOpKind op = MemoryOpKind::kUnknown;
  MemoryKind memory_kind = MemoryKind::kUnknown;
  bool from_pool = false;
  uint64_t address = 0;
  uint64_t bytes = 0;
  friend bool operator==(const MemoryEvent&, const MemoryEvent&) = default;
};

struct ApiEvent {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t correlation_id = 0;
  ApiDomain domain = ApiDomain::kUnknown;
  uint32_t cbid = 0;
  StringRef name = 0;
  uint32_t thread_id = 0;  // OS thread id
  StringRef call_site = 0;
  friend bool operator==(const ApiEvent&, const ApiEvent&) = default;
};

// A named host range on one thread: an NVTX push/pop range from live capture, or a profiler's
// host event from an import, told apart by `domain` (the NVTX domain, or one of the names below).
// Host ranges are what the idle attribution uses to say what the host did while the GPU waited.
inline constexpr std::string_view kUserAnnotationDomain = "user_annotation";  // record_function
inline constexpr std::string_view kCpuOpDomain = "cpu_op";                    // ATen / C++ ops
inline constexpr std::string_view kPythonFunctionDomain = "python_function";  // with_stack frames
// A host sample (an NVTX mark of this domain, named by its call site): the Python line the
// thread ran at that instant, taken while the host left the GPU waiting (inject/core/host_sampler.h).
inline constexpr std::string_view kHostSampleDomain = "host_sample";
// The profiler's own span (Kineto's "Trace" event): what the recording covers.
inline constexpr std::string_view kCaptureDomain = "capture";
// CUPTI range-profiler ranges: kernels were replayed to collect counters, so times are not real.
inline constexpr std::string_view kRangeProfilerDomain = "cuda_profiler_range";

struct NvtxRangeEvent {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  StringRef domain = 0;
  StringRef message = 0;
  uint32_t thread_id = 0;
  uint32_t depth = 0;
  friend bool operator==(const NvtxRangeEvent&, const NvtxRangeEvent&) = default;
};

struct NvtxMarkEvent {
  int64_t timestamp_ns = 0;
  StringRef domain = 0;
  StringRef message = 0;
  uint32_t thread_id = 0;
  friend bool operator==(const NvtxMarkEvent&, const NvtxMarkEvent&) = default;
};

struct OverheadEvent {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  StringRef kind = 0;
  uint32_t thread_id = 0;
  friend bool operator==(const OverheadEvent&, const OverheadEvent&) = default;
};

struct GraphLaunchEvent {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t correlation_id = 0;
  StreamKey stream;
  uint32_t graph_id = 0;
  friend bool operator==(const GraphLaunchEvent&, const GraphLaunchEvent&) = default;
};

struct ExternalCorrelationEvent {
  uint64_t correlation_id = 0;
  uint32_t external_kind = 0;
  uint64_t external_id = 0;
  friend bool operator==(const ExternalCorrelationEvent&, const ExternalCorrelationEvent&) = default;
};

// What a communication kernel does, where the producer knows it (Kineto's NCCL kernel args,
// PyTorch's record_param_comms): joined to the kernel by correlation id. Live CUPTI capture has
// only the kernel name, so every field here is optional (0 / empty ref = unknown).
struct CollectiveEvent {
  uint64_t correlation_id = 0;   // of the kernel's launch
  StringRef op = 0;              // "allreduce", "all_gather", "reduce_scatter", "send", ...
  StringRef dtype = 0;           // "Float", "BFloat16", ...
  StringRef group = 0;           // process group name ("0"); empty = the default group
  uint64_t in_bytes = 0;         // message size per rank (In msg nelems x dtype size)
  uint64_t out_bytes = 0;
  uint32_t group_size = 0;       // ranks in the group; 0 = unknown
  int64_t sequence = -1;         // the group's collective sequence number; -1 = unknown
  friend bool operator==(const CollectiveEvent&, const CollectiveEvent&) = default;
};

struct MemoryPoolEvent {
  int64_t timestamp_ns = 0;
  uint64_t correlation_id = 0;
  uint32_t device_id = 0;
  PoolOpKind op = PoolOpKind::kUnknown;
  bool managed = false;
  uint64_t address = 0;
  uint64_t size = 0;
  uint64_t release_threshold = 0;
  uint64_t utilized_bytes = 0;
  friend bool operator==(const MemoryPoolEvent&, const MemoryPoolEvent&) = default;
};

// Where an op's work figures come from (gpuspy.v1.WorkSource, value for value).
enum class WorkSource : uint8_t { kUnknown = 0, kProfilerFlops = 1, kInputShapes = 2 };

// The arithmetic and the memory traffic of one framework op (a matmul, a convolution, an
// elementwise op), where its producer knows them: the PyTorch profiler's `flops` arg
// (with_flops=True), or the op's input shapes (record_shapes=True) through the formulas of
// importers/kineto/op_work.h. Timed like the op's host range (same start, end and thread), so the
// analysis finds the GPU work it launched: the kernels of its launch calls on that thread inside
// [start, end]. Live CUPTI capture has no shapes and emits none.
struct OpWorkEvent {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t thread_id = 0;
  StringRef op = 0;      // "aten::mm"
  StringRef dtype = 0;   // the first input's type as the profiler writes it: "float", "c10::BFloat16"
  uint64_t flops = 0;    // floating-point operations (a multiply-add is 2); 0 = unknown
  uint64_t bytes = 0;    // inputs read + output written, from the shapes; 0 = unknown
  WorkSource source = WorkSource::kUnknown;  // of `flops`
  friend bool operator==(const OpWorkEvent&, const OpWorkEvent&) = default;
};

// What the GPU's performance monitor measured over one sampling interval of one device (CUPTI PM
// sampling, captured with GPUSPY_COUNTERS=1; inject/core/counter_sampler.h): device-wide, each a
// percent of the unit's sustained peak over [start, end]. Negative: not measured (the chip lacks
// the counter, or it did not fit the sampler's one pass).
struct CounterSampleEvent {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t device_id = 0;
  // sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed: the tensor pipes'
  // busy cycles, averaged over the SMs: how close matrix math runs to the tensor-core peak.
  float tensor_active_pct = -1;
  // dram__throughput.avg.pct_of_peak_sustained_elapsed: DRAM (HBM) traffic against its peak.
  float dram_throughput_pct = -1;
  // sm__cycles_active.avg.pct_of_peak_sustained_elapsed: cycles with a warp resident, per SM.
  float sm_active_pct = -1;
  // gr__cycles_active.avg.pct_of_peak_sustained_elapsed: the compute engine busy at all.
  float gpu_active_pct = -1;
  friend bool operator==(const CounterSampleEvent&, const CounterSampleEvent&) = default;
};

struct LossCounters {
  uint64_t cupti_dropped_records = 0;
  uint64_t queue_dropped_events = 0;
  uint64_t spill_dropped_events = 0;
  uint64_t total() const {
    return cupti_dropped_records + queue_dropped_events + spill_dropped_events;
  }
  friend bool operator==(const LossCounters&, const LossCounters&) = default;
};

// Every kind of event, column-wise. Which string each StringRef names is in the accompanying
// StringTable (see string_table.h).
struct EventColumns {
  std::vector<KernelEvent> kernels;
  std::vector<MemcpyEvent> memcpys;
  std::vector<MemsetEvent> memsets;
  std::vector<SyncEvent> syncs;
  std::vector<MemoryEvent> memory;
  std::vector<ApiEvent> apis;
  std::vector<NvtxRangeEvent> nvtx_ranges;
  std::vector<NvtxMarkEvent> nvtx_marks;
  std::vector<OverheadEvent> overheads;
  std::vector<GraphLaunchEvent> graph_launches;
  std::vector<ExternalCorrelationEvent> external_correlations;
  std::vector<MemoryPoolEvent> memory_pools;
  std::vector<CollectiveEvent> collectives;
  std::vector<OpWorkEvent> op_works;
  std::vector<CounterSampleEvent> counter_samples;

  size_t size() const {
    return kernels.size() + memcpys.size() + memsets.size() + syncs.size() + memory.size() +
           apis.size() + nvtx_ranges.size() + nvtx_marks.size() + overheads.size() +
           graph_launches.size() + external_correlations.size() + memory_pools.size() +
           collectives.size() + op_works.size() + counter_samples.size();
  }
  bool empty() const { return size() == 0; }
  // What the events take in this form (not counting spare capacity): the measure of "a rank's
  // events in the internal form" that memory targets are stated in.
  size_t Bytes() const;
  void clear() { *this = EventColumns{}; }
  // Empties every column, keeping the room each has (a buffer refilled again and again).
  void ClearKeepingCapacity();
  // Appends all of `other`'s events (refs must already be in the same string table).
  void Append(const EventColumns& other);
  // Splits into about `n_chunks` parts of similar size, each kind's events in order (events are
  // apportioned per kind by index, so parts cover similar stretches of time; a collective goes
  // to the part holding its kernel). Empty parts are dropped.
  std::vector<EventColumns> Split(size_t n_chunks) const;
  // The collectives (indexes, in order) of each of Split(n)'s n parts, empty ones included.
  std::vector<std::vector<uint32_t>> CollectivesByPart(size_t n) const;
  // Appends part `c` of Split(n)'s n parts (empty ones included) to `out`, without cutting the
  // others: `collectives` is CollectivesByPart(n)[c].
  void AppendPart(size_t c, size_t n, const std::vector<uint32_t>& collectives, EventColumns* out) const;
  // Earliest start / latest end over all events; {0, 0} when empty.
  std::pair<int64_t, int64_t> TimeRange() const;
  friend bool operator==(const EventColumns&, const EventColumns&) = default;
};

}  // namespace gpuspy
