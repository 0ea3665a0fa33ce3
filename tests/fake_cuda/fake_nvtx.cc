// NVTX as CUPTI reports it with MARKER activity on: a START record at push, an END record with
// the same id (and no name) at pop, an INSTANTANEOUS record for a mark; default domain (NULL).
#include <cstdlib>
#include <vector>

#include "tests/fake_cuda/fake_activity_buffers.h"
#include "tests/fake_cuda/fake_cuda.h"
#include "tests/fake_cuda/fake_cupti_state.h"

using namespace fake_cupti;

namespace {

// nvtxRangePush/Pop nest per thread.
thread_local std::vector<uint32_t> open_ranges;

// See State::nvtx_hooked.
bool Hooked() {
  State& s = S();
  std::lock_guard lock(s.mu);
  if (s.nvtx_hooked == 0) {
    const char* injection = std::getenv("NVTX_INJECTION64_PATH");
    const bool tool = (injection != nullptr && *injection != '\0') || s.complete != nullptr;
    s.nvtx_hooked = tool ? 1 : 2;
  }
  return s.nvtx_hooked == 1;
}

uint32_t NextMarkerId() {
  std::lock_guard lock(S().mu);
  return S().next_marker++;
}

void EmitMarker(CUpti_ActivityFlag flag, uint32_t id, const char* message) {
  CUpti_ActivityMarker2 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MARKER;
  m.flags = flag;
  m.timestamp = Now();
  m.id = id;
  m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m.objectId.pt.processId = ProcessId();
  m.objectId.pt.threadId = ThreadId();
  m.name = message != nullptr ? Intern(message) : nullptr;
  m.domain = nullptr;
  Emit(m);
}

}  // namespace

extern "C" {

void fake_nvtx_range_push(const char* message) {
  if (!Hooked()) return;
  const uint32_t id = NextMarkerId();
  open_ranges.push_back(id);
  EmitMarker(CUPTI_ACTIVITY_FLAG_MARKER_START, id, message != nullptr ? message : "");
}

void fake_nvtx_range_pop(void) {
  if (!Hooked()) return;
  if (open_ranges.empty()) return;  // nvtxRangePop without a push: NVTX ignores it
  const uint32_t id = open_ranges.back();
  open_ranges.pop_back();
  EmitMarker(CUPTI_ACTIVITY_FLAG_MARKER_END, id, nullptr);
}

void fake_nvtx_mark(const char* message) {
  if (!Hooked()) return;
  EmitMarker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, NextMarkerId(),
             message != nullptr ? message : "");
}

}  // extern "C"
