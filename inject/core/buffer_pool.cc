#include "inject/core/buffer_pool.h"

#include <cstdlib>

namespace gpuspy::inject {

BufferPool::~BufferPool() {
  for (uint8_t* b : free_) std::free(b);
}

uint8_t* BufferPool::Acquire() {
  std::lock_guard lock(mu_);
  if (!free_.empty()) {
    uint8_t* b = free_.back();
    free_.pop_back();
    return b;
  }
  if (allocated_ >= max_buffers_) {
    ++refusals_;
    return nullptr;
  }
  // Allocated lazily: a process that launches little never pays for the whole pool.
  auto* b = static_cast<uint8_t*>(std::aligned_alloc(8, (buffer_bytes_ + 7) / 8 * 8));
  if (b != nullptr) ++allocated_;
  return b;
}

void BufferPool::Release(uint8_t* buffer) {
  if (buffer == nullptr) return;
  std::lock_guard lock(mu_);
  free_.push_back(buffer);
}

uint32_t BufferPool::in_use() const {
  std::lock_guard lock(mu_);
  return allocated_ - static_cast<uint32_t>(free_.size());
}

uint32_t BufferPool::allocated() const {
  std::lock_guard lock(mu_);
  return allocated_;
}

uint64_t BufferPool::refusals() const {
  std::lock_guard lock(mu_);
  return refusals_;
}

}  // namespace gpuspy::inject
