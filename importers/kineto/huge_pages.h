// Transparent huge pages for memory the reader is about to fill: with THP on "madvise" (Debian's
// default) a fresh mapping is faulted in 4 KiB at a time, and on a VM a fault costs microseconds;
// advised, it is faulted in 2 MiB at a time and its TLB entries cover 512 times as much.
#pragma once

#include <cstddef>

namespace gpuspy::importers {

// A transparent huge page (x86-64, arm64 with 4 KiB pages).
inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// Asks for huge pages on the whole huge pages inside [data, data + bytes) (the ends, which may
// share a page with other memory, are left as they are). A hint: without THP, or on a failure, the
// memory stays as it was. Returns the bytes advised.
size_t AdviseHugePages(const void* data, size_t bytes);

// The same for a vector's reserved storage (its capacity, not only its size).
template <typename Vector>
size_t AdviseHugePagesFor(const Vector& v) {
  return AdviseHugePages(v.data(), v.capacity() * sizeof(typename Vector::value_type));
}

}  // namespace gpuspy::importers
