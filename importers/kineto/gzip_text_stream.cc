#include "importers/kineto/gzip_text_stream.h"

#include <fcntl.h>
#include <isa-l/igzip_lib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <span>

#include "importers/kineto/gzip_size.h"
#include "importers/kineto/huge_pages.h"
#include "importers/kineto/long_values.h"
#include "importers/kineto/steady_now.h"

namespace gpuspy::importers {
namespace {

// The compressed file is read this much at a time.
constexpr size_t kInputBytes = size_t{256} << 10;
// The window as it starts: two pieces of traceEvents, the chunk inflated past them and room to
// spare, so that it is rarely grown, and moves what it still holds to its start rarely.
constexpr size_t kInitialWindowBytes = size_t{8} << 20;
// ISA-L's avail_in and avail_out are 32-bit.
constexpr size_t kMaxInflateCall = size_t{1} << 30;

}  // namespace

std::unique_ptr<GzipTextStream> GzipTextStream::Open(const std::string& path,
                                                     uint64_t max_json_bytes,
                                                     size_t max_window_bytes) {
  // O_NONBLOCK: a FIFO with no writer must not hang the open (the whole read refuses it).
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return nullptr;
  std::unique_ptr<GzipTextStream> s(new (std::nothrow) GzipTextStream());
  if (s == nullptr) {
    close(fd);
    return nullptr;
  }
  s->fd_ = fd;
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 2) return nullptr;
  s->file_bytes_ = static_cast<uint64_t>(st.st_size);
  s->max_json_bytes_ = max_json_bytes;
  s->max_window_bytes_ = max_window_bytes;
  s->state_.reset(new (std::nothrow) inflate_state);
  s->input_.reset(new (std::nothrow) unsigned char[kInputBytes]);
  if (s->state_ == nullptr || s->input_ == nullptr) return nullptr;
  // The last member's ISIZE (little-endian, read as gzip_size.cc reads it): a size hint only.
  if (s->file_bytes_ >= 4 && pread(fd, &s->trailer_size_, 4, static_cast<off_t>(s->file_bytes_ - 4)) != 4) {
    s->trailer_size_ = 0;
  }
  if (!s->ReadInput() ||
      !IsGzip({s->input_.get() + s->input_begin_, s->input_end_ - s->input_begin_})) {
    return nullptr;
  }
  isal_inflate_init(s->state_.get());
  s->state_->crc_flag = ISAL_GZIP;
  if (!s->MakeRoom(kInitialWindowBytes - kPaddingBytes)) return nullptr;
  return s;
}

GzipTextStream::~GzipTextStream() {
  if (fd_ >= 0) close(fd_);
}

uint64_t GzipTextStream::expected_size() const {
  if (complete_) return end_;
  // A damaged or wrapped trailer may claim up to 4 GiB: never more than the text may hold.
  return std::max<uint64_t>(std::min<uint64_t>(trailer_size_, max_json_bytes_), end_);
}

void GzipTextStream::CopyOut(size_t offset, size_t n, char* to) const {
  std::memcpy(to, window_.get() + (offset - base_), n);
}

void GzipTextStream::Drop(size_t offset) { dropped_ = std::max(dropped_, std::min(offset, end_)); }

bool GzipTextStream::MakeRoom(size_t n) {
  const size_t need = n + kPaddingBytes;
  if (capacity_ - (end_ - base_) >= need) return true;
  // Drop what the reader is done with: the text it still needs moves to the window's start.
  if (dropped_ > base_) {
    std::memmove(window_.get(), window_.get() + (dropped_ - base_), end_ - dropped_);
    base_ = dropped_;
    if (capacity_ - (end_ - base_) >= need) return true;
  }
  const size_t live = end_ - base_;
  if (live + n > max_window_bytes_) return false;
  const size_t grown = std::max(std::min(capacity_ * 2, max_window_bytes_ + kPaddingBytes), live + need);
  std::unique_ptr<char[]> bigger(new (std::nothrow) char[grown]);
  if (bigger == nullptr) return false;
  // Faulted in 2 MiB at a time: on a VM 4 KiB faults on a fresh window cost more than the inflate.
  AdviseHugePages(bigger.get(), grown);
  if (live > 0) std::memcpy(bigger.get(), window_.get(), live);
  window_ = std::move(bigger);
  capacity_ = grown;
  return true;
}

bool GzipTextStream::ReadInput() {
  if (input_begin_ > 0) {
    std::memmove(input_.get(), input_.get() + input_begin_, input_end_ - input_begin_);
    input_end_ -= input_begin_;
    input_begin_ = 0;
  }
  size_t got_any = 0;
  while (input_end_ < kInputBytes && file_read_ < file_bytes_) {
    const ssize_t got = pread(fd_, input_.get() + input_end_, kInputBytes - input_end_,
                              static_cast<off_t>(file_read_));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // shrank, or does not read: what is there is all there is
    input_end_ += static_cast<size_t>(got);
    file_read_ += static_cast<uint64_t>(got);
    got_any += static_cast<size_t>(got);
  }
  return got_any > 0;
}

bool GzipTextStream::NextMember() {
  if (input_end_ - input_begin_ < 2) (void)ReadInput();
  if (!IsGzip({input_.get() + input_begin_, input_end_ - input_begin_})) return false;
  isal_inflate_reset(state_.get());
  state_->crc_flag = ISAL_GZIP;
  return true;
}

bool GzipTextStream::InflateChunk() {
  if (!MakeRoom(kInflateChunkBytes)) return false;
  const size_t room = std::min(capacity_ - (end_ - base_) - kPaddingBytes, kMaxInflateCall);
  char* out = window_.get() + (end_ - base_);
  state_->next_out = reinterpret_cast<uint8_t*>(out);
  state_->avail_out = static_cast<uint32_t>(room);
  while (state_->avail_out > 0) {
    if (input_begin_ == input_end_ && !ReadInput()) {
      return false;  // the file ends inside a member: truncated
    }
    unsigned char* in = input_.get() + input_begin_;
    const size_t in_bytes = std::min(input_end_ - input_begin_, kMaxInflateCall);
    state_->next_in = in;
    state_->avail_in = static_cast<uint32_t>(in_bytes);
    const uint32_t out_before = state_->avail_out;
    const int r = isal_inflate(state_.get());
    const size_t consumed = static_cast<size_t>(state_->next_in - in);
    input_begin_ += consumed;
    if (r != ISAL_DECOMP_OK && r != ISAL_END_INPUT && r != ISAL_OUT_OVERFLOW) return false;
    if (state_->block_state == ISAL_BLOCK_FINISH) {
      // The member ended and its trailer checked out: another may follow.
      if (!NextMember()) {
        complete_ = true;
        break;
      }
    } else if (consumed == 0 && state_->avail_out == out_before && !ReadInput()) {
      return false;  // no progress, and no more input: the member is cut short
    }
  }
  const size_t produced = room - state_->avail_out;
  end_ += produced;
  std::memset(window_.get() + (end_ - base_), 0, kPaddingBytes);
  // An overlong value is refused by the whole read (long_values.h): give up as soon as one shows.
  return end_ <= max_json_bytes_ && values_.Feed({out, produced});
}

bool GzipTextStream::Fill(size_t until) {
  if (failed_) return false;
  const int64_t start = SteadyNowNs();
  bool ok = true;
  while (ok && end_ < until && !complete_) {
    ok = InflateChunk();
  }
  inflate_ns_ += SteadyNowNs() - start;
  return ok || Fail();
}

}  // namespace gpuspy::importers
