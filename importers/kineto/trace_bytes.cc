#include "importers/kineto/trace_bytes.h"

#include <fcntl.h>
#include <libdeflate.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "importers/kineto/gzip_size.h"
#include "importers/kineto/json_start.h"
#include "importers/kineto/steady_now.h"

namespace gpuspy::importers {
namespace {

size_t PageRound(size_t n) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (n + page - 1) / page * page;
}

// A read-only view of a whole file; closes and unmaps itself.
struct MappedFile {
  const unsigned char* data = nullptr;
  size_t size = 0;
  ~MappedFile() {
    if (data != nullptr) munmap(const_cast<unsigned char*>(data), size);
  }
};

// Whether the text may be a trace (its first non-space byte opens an object or array). Only then
// is the file faulted in up front: a 2 GB file of zeros was otherwise read whole (12 s, 2 GB RSS)
// to report its first byte.
// How much of a file's text is looked at to tell whether it can be a trace at all.
constexpr size_t kHeadBytes = 4096;

bool MayBeJson(const unsigned char* p, size_t n) {
  return CheckStartsLikeJson({reinterpret_cast<const char*>(p), std::min(n, kHeadBytes)}).ok();
}

absl::Status GzipDamaged(const std::string& path, size_t member_offset, size_t file_bytes) {
  return absl::DataLossError(absl::StrCat(
      path, ": truncated or corrupt gzip stream (the member starting at compressed byte ",
      member_offset, " of ", file_bytes, " does not inflate)"));
}

// Where inflating into an exact size ended, when it did not end well.
struct InflateFailure {
  bool no_memory = false;
  size_t member_offset = 0;  // the member that did not inflate, or did not fit
};

// Inflates the gzip members of `gz` (concatenated members are one stream: gzip -c a b > c) into
// one new anonymous mapping of `size` bytes and the parser's padding; nullptr unless they inflate
// to exactly `size` bytes. Anonymous pages, not malloc: ReleaseBefore can hand them back as the
// reader moves on.
char* InflateExactly(std::span<const unsigned char> gz, uint64_t size, InflateFailure* failure) {
  const size_t reserved = PageRound(size + kPaddingBytes);
  void* area = mmap(nullptr, reserved, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  // Huge pages where the kernel has them (THP "madvise" mode, Debian's default): one fault per
  // 2 MiB instead of per 4 KiB. Faults were most of the inflate on a VM (207 MB: 1.2 s -> 0.3 s);
  // ReleaseBefore's page-granular DONTNEED still hands text back (the kernel splits the page).
  if (area != MAP_FAILED) (void)madvise(area, reserved, MADV_HUGEPAGE);
  libdeflate_decompressor* d = area == MAP_FAILED ? nullptr : libdeflate_alloc_decompressor();
  if (d == nullptr) {
    if (area != MAP_FAILED) munmap(area, reserved);
    failure->no_memory = true;
    return nullptr;
  }
  char* buf = static_cast<char*>(area);
  size_t in_off = 0, out_off = 0;
  libdeflate_result r = LIBDEFLATE_SUCCESS;
  while (in_off < gz.size() && IsGzip(gz.subspan(in_off))) {
    size_t in_used = 0, out_used = 0;
    r = libdeflate_gzip_decompress_ex(d, gz.data() + in_off, gz.size() - in_off, buf + out_off,
                                      size - out_off, &in_used, &out_used);
    if (r != LIBDEFLATE_SUCCESS) break;
    in_off += in_used;
    out_off += out_used;
  }
  libdeflate_free_decompressor(d);
  if (r != LIBDEFLATE_SUCCESS || out_off != size) {
    munmap(buf, reserved);
    failure->member_offset = in_off;
    return nullptr;
  }
  std::memset(buf + out_off, 0, kPaddingBytes);
  return buf;
}

}  // namespace

TraceBytes::TraceBytes(TraceBytes&& o) noexcept { *this = std::move(o); }

TraceBytes& TraceBytes::operator=(TraceBytes&& o) noexcept {
  if (this != &o) {
    Release();
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    mapped_bytes_ = std::exchange(o.mapped_bytes_, 0);
    fd_ = std::exchange(o.fd_, -1);
    released_ = std::exchange(o.released_, 0);
    read_through_mapping_ = std::exchange(o.read_through_mapping_, false);
    lost_text_ = std::exchange(o.lost_text_, false);
    file_bytes_ = o.file_bytes_;
    gzipped_ = o.gzipped_;
    inflate_ns_ = o.inflate_ns_;
  }
  return *this;
}

TraceBytes::~TraceBytes() { Release(); }

void TraceBytes::Release() {
  if (fd_ >= 0) close(std::exchange(fd_, -1));
  if (data_ == nullptr) return;
  if (mapped_bytes_ > 0) {
    munmap(data_, mapped_bytes_);
  } else {
    std::free(data_);
  }
  data_ = nullptr;
}

void TraceBytes::ReleaseBefore(size_t offset) {
  if (mapped_bytes_ == 0 || data_ == nullptr) return;
  // A file read with pread has no page of its mapping in memory unless a read fell back to it:
  // an madvise per piece, and the TLB flush it brings, were 1.5% of a read for nothing.
  if (fd_ >= 0 && !read_through_mapping_) return;
  // Whole pages only; for inflated text whole huge pages (by address: the mapping need not start
  // on one). Handing back part of a huge page splits it, and the reader then copied the rest of
  // that page out through 4 KiB entries: with 1 MiB pieces every huge page was split before it
  // was read through, and the copy of a 207 MB trace's pieces took 3x as long.
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t unit = gzipped_ ? std::max(page, kHugePageBytes) : page;
  const uintptr_t base = reinterpret_cast<uintptr_t>(data_);
  const uintptr_t upto = (base + std::min(offset, size_)) / unit * unit;
  if (upto <= base) return;
  const size_t end = static_cast<size_t>(upto - base) / page * page;
  if (end <= released_) return;
  if (madvise(data_ + released_, end - released_, MADV_DONTNEED) == 0) {
    lost_text_ = lost_text_ || gzipped_;
    released_ = end;
  }
}

void TraceBytes::CopyOut(size_t offset, size_t n, char* to) const {
  size_t done = 0;
  while (fd_ >= 0 && done < n) {
    const ssize_t got = pread(fd_, to + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // the file shrank or cannot be read: the mapping says what it can
    done += static_cast<size_t>(got);
  }
  if (done < n) {
    read_through_mapping_ = true;
    std::memcpy(to + done, data_ + offset + done, n - done);
  }
}

TraceBytes TraceBytes::Copy(std::string_view json) {
  TraceBytes out;
  out.data_ = static_cast<char*>(std::calloc(json.size() + kPaddingBytes, 1));
  if (!json.empty()) std::memcpy(out.data_, json.data(), json.size());
  out.size_ = json.size();
  out.file_bytes_ = json.size();
  return out;
}

absl::StatusOr<TraceBytes> TraceBytes::Read(const std::string& path, bool populate_all,
                                            uint64_t max_json_bytes) {
  const uint64_t most = std::min(max_json_bytes, kMaxTraceBytes);
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever before fstat can
  // refuse it (regular files ignore the flag).
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a regular file"));
  }
  const size_t file_size = static_cast<size_t>(st.st_size);
  TraceBytes out;
  out.file_bytes_ = file_size;
  if (file_size == 0) {
    close(fd);
    out.data_ = static_cast<char*>(std::calloc(kPaddingBytes, 1));
    return out;
  }
  MappedFile file;
  void* m = mmap(nullptr, file_size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (m == MAP_FAILED) {
    const int err = errno;
    close(fd);
    return absl::UnavailableError(absl::StrCat("cannot map ", path, ": ", std::strerror(err)));
  }
  file.data = static_cast<const unsigned char*>(m);
  file.size = file_size;
  madvise(m, file_size, MADV_SEQUENTIAL);

  if (!IsGzip({file.data, file.size})) {
    if (file_size > most) {
      close(fd);
      return absl::ResourceExhaustedError(absl::StrCat(
          path, ": ", file_size, " bytes; traces of at most ", most,
          " bytes are read (--max-trace-bytes)"));
    }
    // MAP_POPULATE: one bulk fault-in instead of one fault per page during the index pass. A
    // reader in pieces copies them out of the file instead, and keeps the descriptor for that.
    const int populate = populate_all && MayBeJson(file.data, file.size) ? MAP_POPULATE : 0;
    // The parser reads past the end: reserve zeroed pages for the file plus the padding and map
    // the file over their start, so the tail is readable zeros instead of SIGBUS.
    const size_t reserved = PageRound(file_size + kPaddingBytes);
    void* area = mmap(nullptr, reserved, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void* over = area == MAP_FAILED ? MAP_FAILED
                                    : mmap(area, file_size, PROT_READ,
                                           MAP_PRIVATE | MAP_FIXED | populate, fd, 0);
    if (over == MAP_FAILED) {
      close(fd);
      if (area != MAP_FAILED) munmap(area, reserved);
      return absl::UnavailableError(absl::StrCat("cannot map ", path));
    }
    if (populate_all) {
      close(fd);
    } else {
      out.fd_ = fd;
    }
    madvise(area, file_size, MADV_SEQUENTIAL);
    out.data_ = static_cast<char*>(area);
    out.size_ = file_size;
    out.mapped_bytes_ = reserved;
    return out;
  }
  close(fd);

  out.gzipped_ = true;
  const int64_t start = SteadyNowNs();
  const std::span<const unsigned char> gz(file.data, file.size);
  // Text that cannot be a trace is refused from its head, before it is counted or inflated whole
  // (1 GiB of gzip'd zeros took 1 GiB of memory to be refused for its first byte). A head of
  // whitespace only says nothing yet, and an empty one (damage at the start) is the inflate's to
  // report.
  const std::string head = InflatedHead(gz, kHeadBytes);
  if (!std::all_of(head.begin(), head.end(), IsJsonSpace)) {
    if (absl::Status st = CheckStartsLikeJson(head); !st.ok()) {
      return absl::Status(st.code(), absl::StrCat(path, ": ", st.message()));
    }
  }
  // The size first, then one buffer of exactly that size: memory never holds text that may turn
  // out to be over the limit (before: a bomb filled the whole limit, 2 GiB, before its refusal).
  // A trailer that must be exact saves the count (one member, under ~4 MB compressed), and so does
  // a larger single member's plausible one (at most 64x the file) when the inflate fills it
  // exactly; any other file is counted in bounded memory at zlib's speed before libdeflate
  // inflates it (the count was 0.29 s of the 0.46 s a 207 MB trace took to inflate:
  // bench/results/hardening-gzip-bomb-2026-11-28.md, offline-analyze-2026-12-02.md).
  std::optional<uint64_t> trailer = ExactTrailerSize(gz);
  if (!trailer) trailer = PlausibleTrailerSize(gz);
  // A trailer over the limit is over it, or damaged: the count says which.
  bool count = !trailer.has_value() || *trailer > most;
  uint64_t size = count ? 0 : *trailer;
  for (;;) {
    if (count) {
      const InflatedCount counted = CountInflatedBytes(gz, most);
      if (counted.over_limit) {
        return absl::ResourceExhaustedError(absl::StrCat(
            path, ": inflates to more than ", most, " bytes, the most a trace may have (--max-trace-bytes)"));
      }
      if (counted.damaged) return GzipDamaged(path, counted.member_offset, file.size);
      size = counted.bytes;
    }
    InflateFailure failure;
    if (char* text = InflateExactly(gz, size, &failure); text != nullptr) {
      out.data_ = text;
      out.size_ = size;
      out.mapped_bytes_ = PageRound(size + kPaddingBytes);
      out.inflate_ns_ = SteadyNowNs() - start;
      return out;
    }
    if (failure.no_memory) {
      return absl::ResourceExhaustedError(
          absl::StrCat(path, ": cannot allocate ", size, " bytes to inflate into"));
    }
    // A trailer that lied (damaged) gets the count; after a count, the members' CRC or ISIZE
    // check failed (the count does not check them), or zlib and libdeflate disagree: damage.
    if (count) return GzipDamaged(path, failure.member_offset, file.size);
    count = true;
  }
}

}  // namespace gpuspy::importers
