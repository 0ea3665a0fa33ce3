// Bit-packing of small enum/bool attributes into one varint column (see wire.proto comments).
#pragma once

#include <cstdint>

#include "model/events.h"

namespace gpuspy {

// Largest valid value of each packed enum; the decoder rejects anything above.
inline constexpr uint32_t kMaxCopyKind = static_cast<uint32_t>(CopyKind::kPtoP);
inline constexpr uint32_t kMaxMemoryKind = static_cast<uint32_t>(MemoryKind::kArray);
inline constexpr uint32_t kMaxSyncKind = static_cast<uint32_t>(SyncKind::kContext);
inline constexpr uint32_t kMaxMemoryOpKind = static_cast<uint32_t>(MemoryOpKind::kFree);
inline constexpr uint32_t kMaxApiDomain = static_cast<uint32_t>(ApiDomain::kDriver);
inline constexpr uint32_t kMaxPoolOpKind = static_cast<uint32_t>(PoolOpKind::kUsage);

// copy_kind | src_kind << 3 | dst_kind << 6 | async << 9
inline uint32_t PackMemcpyKinds(const MemcpyEvent& e) {
  return static_cast<uint32_t>(e.copy_kind) | static_cast<uint32_t>(e.src_kind) << 3 |
         static_cast<uint32_t>(e.dst_kind) << 6 | static_cast<uint32_t>(e.async) << 9;
}
inline bool UnpackMemcpyKinds(uint32_t packed, MemcpyEvent* e) {
  const uint32_t copy = packed & 7, src = (packed >> 3) & 7, dst = (packed >> 6) & 7;
  if (packed >> 10 || copy > kMaxCopyKind || src > kMaxMemoryKind || dst > kMaxMemoryKind) {
    return false;
  }
  e->copy_kind = static_cast<CopyKind>(copy);
  e->src_kind = static_cast<MemoryKind>(src);
  e->dst_kind = static_cast<MemoryKind>(dst);
  e->async = (packed >> 9) & 1;
  return true;
}

// memory_kind | async << 3
inline uint32_t PackMemsetKinds(const MemsetEvent& e) {
  return static_cast<uint32_t>(e.memory_kind) | static_cast<uint32_t>(e.async) << 3;
}
inline bool UnpackMemsetKinds(uint32_t packed, MemsetEvent* e) {
  const uint32_t kind = packed & 7;
  if (packed >> 4 || kind > kMaxMemoryKind) return false;
  e->memory_kind = static_cast<MemoryKind>(kind);
  e->async = (packed >> 3) & 1;
  return true;
}

// op | memory_kind << 2 | from_pool << 5
inline uint32_t PackMemoryKinds(const MemoryEvent& e) {
  return static_cast<uint32_t>(e.op) | static_cast<uint32_t>(e.memory_kind) << 2 |
         static_cast<uint32_t>(e.from_pool) << 5;
}
inline bool UnpackMemoryKinds(uint32_t packed, MemoryEvent* e) {
  const uint32_t op = packed & 3, kind = (packed >> 2) & 7;
  if (packed >> 6 || op > kMaxMemoryOpKind || kind > kMaxMemoryKind) return false;
  e->op = static_cast<MemoryOpKind>(op);
  e->memory_kind = static_cast<MemoryKind>(kind);
  e->from_pool = (packed >> 5) & 1;
  return true;
}

// op's low 2 bits | managed << 2 | op's bit 2 << 3: kUsage (4) came after the layout was fixed at
// two op bits, so its high bit goes above `managed`; every earlier packed value is unchanged.
inline uint32_t PackPoolKinds(const MemoryPoolEvent& e) {
  const auto op = static_cast<uint32_t>(e.op);
  return (op & 3) | static_cast<uint32_t>(e.managed) << 2 | (op >> 2) << 3;
}
inline bool UnpackPoolKinds(uint32_t packed, MemoryPoolEvent* e) {
  const uint32_t op = (packed & 3) | ((packed >> 3) & 1) << 2;
  if (packed >> 4 || op > kMaxPoolOpKind) return false;
  e->op = static_cast<PoolOpKind>(op);
  e->managed = (packed >> 2) & 1;
  return true;
}

}  // namespace gpuspy
