#include "collector/storage/segment_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "collector/storage/payload_codec.h"
#include "collector/storage/private_files.h"

namespace gpuspy::collector {
namespace {

struct Header {
  uint32_t magic;
  uint32_t length;
  uint32_t crc;
  uint32_t flags;
  uint64_t process_id;
  uint64_t sequence;
};
static_assert(sizeof(Header) == kSegmentHeaderBytes);

uint32_t Crc(const std::string& payload) {
  return static_cast<uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(payload.data()), static_cast<uInt>(payload.size())));
}

absl::Status WriteError(const std::string& path, int err) {
  const std::string msg = absl::StrCat("cannot write ", path, ": ", std::strerror(err));
  if (err == ENOSPC || err == EFBIG || err == EDQUOT) return absl::ResourceExhaustedError(msg);
  return absl::InternalError(msg);
}

}  // namespace

absl::StatusOr<std::unique_ptr<SegmentWriter>> SegmentWriter::Open(const std::string& path) {
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, kPrivateFileMode);
  if (fd < 0) {
    const int err = errno;
    const std::string msg = absl::StrCat("cannot open ", path, ": ", std::strerror(err));
    if (err == ENOSPC || err == EDQUOT) return absl::ResourceExhaustedError(msg);
    return absl::UnavailableError(msg);
  }
  // open()'s mode applies only to a file it creates: a segment left 0666 by hand or by an older
  // gpuspyd kept its mode, readable by every uid.
  if (fchmod(fd, kPrivateFileMode) != 0) {
    const int err = errno;
    close(fd);
    return absl::UnavailableError(absl::StrCat("cannot chmod ", path, ": ", std::strerror(err)));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return absl::UnavailableError(absl::StrCat("cannot stat ", path, ": ", std::strerror(errno)));
  }
  return std::unique_ptr<SegmentWriter>(new SegmentWriter(path, fd, static_cast<uint64_t>(st.st_size)));
}

SegmentWriter::~SegmentWriter() { close(fd_); }

absl::StatusOr<uint64_t> SegmentWriter::Append(uint64_t process_id, uint64_t sequence,
                                               const std::string& payload, uint32_t flags) {
  if (payload.size() > UINT32_MAX) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch of ", payload.size(), " bytes does not fit a segment record"));
  }
  Header h{kSegmentRecordMagic, static_cast<uint32_t>(payload.size()), Crc(payload), flags, process_id,
           sequence};
  std::string record(reinterpret_cast<const char*>(&h), sizeof(h));
  record += payload;
  const uint64_t offset = size_;
  size_t done = 0;
  while (done < record.size()) {
    const ssize_t n = pwrite(fd_, record.data() + done, record.size() - done,
                             static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;
      (void)!ftruncate(fd_, static_cast<off_t>(offset));
      return WriteError(path_, err);
    }
    done += static_cast<size_t>(n);
  }
  size_ = offset + record.size();
  return offset;
}

absl::Status SegmentWriter::Truncate(uint64_t bytes) {
  if (ftruncate(fd_, static_cast<off_t>(bytes)) != 0) {
    return absl::InternalError(absl::StrCat("cannot truncate ", path_, ": ", std::strerror(errno)));
  }
  size_ = bytes;
  return absl::OkStatus();
}

absl::Status SegmentWriter::Sync() {
  if (fdatasync(fd_) != 0) {
    return absl::InternalError(absl::StrCat("fdatasync ", path_, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status SyncDirectory(const std::string& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return absl::InternalError(absl::StrCat("cannot open ", dir, ": ", std::strerror(errno)));
  }
  const int rc = fsync(fd);
  const int err = errno;
  close(fd);
  if (rc != 0) return absl::InternalError(absl::StrCat("fsync ", dir, ": ", std::strerror(err)));
  return absl::OkStatus();
}

absl::StatusOr<StoredRecord> ReadStoredRecord(int fd, const std::string& path, uint64_t offset,
                                              uint64_t length, uint64_t process_id,
                                              uint64_t sequence) {
  std::string buf(kSegmentHeaderBytes + length, '\0');
  size_t done = 0;
  while (done < buf.size()) {
    const ssize_t n = pread(fd, buf.data() + done, buf.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return absl::DataLossError(absl::StrCat(path, " offset ", offset, ": record cut short"));
    }
    done += static_cast<size_t>(n);
  }
  Header h;
  std::memcpy(&h, buf.data(), sizeof(h));
  StoredRecord record;
  record.bytes = buf.substr(kSegmentHeaderBytes);
  record.flags = h.flags;
  if (h.magic != kSegmentRecordMagic || h.length != length || h.process_id != process_id ||
      h.sequence != sequence) {
    return absl::DataLossError(absl::StrCat(path, " offset ", offset, ": bad record header"));
  }
  if (h.crc != Crc(record.bytes)) {
    return absl::DataLossError(absl::StrCat(path, " offset ", offset, ": checksum mismatch"));
  }
  return record;
}

absl::StatusOr<std::string> ReadSegmentRecord(int fd, const std::string& path, uint64_t offset,
                                              uint64_t length, uint64_t process_id,
                                              uint64_t sequence) {
  absl::StatusOr<StoredRecord> record =
      ReadStoredRecord(fd, path, offset, length, process_id, sequence);
  if (!record.ok()) return record.status();
  if (record->flags & kSegmentFlagZstd) {
    absl::StatusOr<std::string> raw = DecompressPayload(record->bytes, kMaxStoredPayloadBytes);
    if (!raw.ok()) {
      return absl::DataLossError(absl::StrCat(path, " offset ", offset, ": ", raw.status().message()));
    }
    return raw;
  }
  return std::move(record->bytes);
}

absl::StatusOr<std::vector<ScannedRecord>> ScanSegmentRecords(const std::string& path,
                                                              uint64_t* unreadable_bytes) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    return absl::UnavailableError(absl::StrCat("cannot stat ", path, ": ", std::strerror(err)));
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  std::vector<ScannedRecord> out;
  uint64_t offset = 0;
  while (offset + kSegmentHeaderBytes <= size) {
    Header h;
    if (pread(fd, &h, sizeof(h), static_cast<off_t>(offset)) != static_cast<ssize_t>(sizeof(h)) ||
        h.magic != kSegmentRecordMagic || offset + kSegmentHeaderBytes + h.length > size) {
      break;
    }
    out.push_back({offset, h.length, h.process_id, h.sequence});
    offset += kSegmentHeaderBytes + h.length;
  }
  close(fd);
  *unreadable_bytes = size - offset;
  return out;
}

}  // namespace gpuspy::collector
