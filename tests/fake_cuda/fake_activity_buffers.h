// The activity API's buffer handling: records go back to back (8-byte aligned) into buffers the
// client hands over through BufferRequested, and go back through BufferCompleted when full or
// flushed. Records that find no buffer are dropped and counted per queue.
#pragma once

#include <cupti.h>

#include <cstddef>
#include <cstdint>

namespace fake_cupti {

// Size of the CUDA 13 record struct for `kind`; 0 for kinds the fake never writes.
size_t RecordSize(CUpti_ActivityKind kind);
// Records are padded to this in a buffer, like CUPTI's.
inline size_t Padded(size_t n) { return (n + 7) / 8 * 8; }

bool KindEnabled(CUpti_ActivityKind kind);

// Appends a record if its kind is enabled. `context_id`/`stream_id` name the queue a drop is
// counted against (context id 0: the global queue, for records that belong to no context).
void EmitRecord(const void* record, size_t size, uint32_t context_id, uint32_t stream_id);
template <typename T>
void Emit(const T& record, uint32_t context_id = 0, uint32_t stream_id = 0) {
  EmitRecord(&record, sizeof(T), context_id, stream_id);
}

// Hands every non-empty buffer back, synchronously on the calling thread, and waits for
// completions other threads are delivering at the moment, so all records emitted before the call
// have reached the client when it returns.
void FlushAllBuffers();
// cuptiFinalize: hands back every buffer we hold, empty ones included (the client's memory).
void ReturnAllBuffers();
// Dropped count for a queue, reset once read; `context` NULL: all queues together.
size_t TakeDropped(CUcontext context, uint32_t stream_id);
// cuptiActivityGetNextRecord.
CUptiResult NextRecord(uint8_t* buffer, size_t valid_size, CUpti_Activity** record);

}  // namespace fake_cupti
