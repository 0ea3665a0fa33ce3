// CUPTI activity buffers, bounded. CUPTI asks for a buffer from application threads (inside
// kernel launches), so Acquire must be quick; when the bound is reached it returns nullptr and
// CUPTI drops records (counted) instead of the application waiting or memory growing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace gpuspy::inject {

class BufferPool {
 public:
  BufferPool(size_t buffer_bytes, uint32_t max_buffers)
      : buffer_bytes_(buffer_bytes), max_buffers_(max_buffers) {}
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // A buffer of buffer_bytes(), 8-byte aligned as CUPTI requires; nullptr when max_buffers are
  // all in use.
  uint8_t* Acquire();
  void Release(uint8_t* buffer);

  size_t buffer_bytes() const { return buffer_bytes_; }
  uint32_t in_use() const;
  uint32_t allocated() const;
  uint64_t refusals() const;

 private:
  const size_t buffer_bytes_;
  const uint32_t max_buffers_;
  mutable std::mutex mu_;
  std::vector<uint8_t*> free_;
  uint32_t allocated_ = 0;
  uint64_t refusals_ = 0;
};

}  // namespace gpuspy::inject
