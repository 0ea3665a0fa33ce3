#include "client/spill/spill_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "client/spill/private_directory.h"

namespace gpuspy::inject {
namespace {

constexpr char kMagic[8] = {'G', 'P', 'U', 'S', 'P', 'I', 'L', 'L'};
constexpr uint32_t kVersion = 1;
// magic, version, header length, header checksum
constexpr uint64_t kPreambleBytes = sizeof(kMagic) + 3 * sizeof(uint32_t);
// A header is an identity: anything much larger is not one of ours.
constexpr uint32_t kMaxHeaderBytes = 1 << 20;

// FNV-1a: enough to detect a torn tail; this is not an integrity guarantee against tampering.
uint32_t Checksum(const char* data, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; ++i) {
    h ^= static_cast<uint8_t>(data[i]);
    h *= 16777619u;
  }
  return h;
}

// pread until `n` bytes; false on errors or a short read (the end of the file).
bool ReadExactly(int fd, uint64_t offset, char* out, size_t n) {
  size_t done = 0;
  while (done < n) {
    const ssize_t r = pread(fd, out + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    done += static_cast<size_t>(r);
  }
  return true;
}

bool WriteAll(int fd, uint64_t offset, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = pwrite(fd, bytes.data() + done, bytes.size() - done,
                             static_cast<off_t>(offset + done));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    done += static_cast<size_t>(w);
  }
  return true;
}

// Hands the records in [pos, end) to `deliver`, one in memory at a time, until it says no or a
// record is damaged (result->torn). Returns where it stopped.
uint64_t WalkRecords(int fd, uint64_t pos, uint64_t end,
                     const std::function<bool(const std::string&)>& deliver,
                     SpillReplayResult* result) {
  std::string batch;
  while (pos < end) {
    uint32_t header[2];
    if (pos + 8 > end || !ReadExactly(fd, pos, reinterpret_cast<char*>(header), sizeof(header)) ||
        pos + 8 + header[0] > end) {
      result->torn = true;
      break;
    }
    batch.resize(header[0]);
    if (!ReadExactly(fd, pos + 8, batch.data(), batch.size()) ||
        Checksum(batch.data(), batch.size()) != header[1]) {
      result->torn = true;
      break;
    }
    if (!deliver(batch)) break;
    ++result->delivered;
    pos += 8 + header[0];
  }
  return pos;
}

uint64_t CountRecords(int fd, uint64_t pos, uint64_t end) {
  uint64_t n = 0;
  while (pos + 8 <= end) {
    uint32_t size = 0;
    if (!ReadExactly(fd, pos, reinterpret_cast<char*>(&size), sizeof(size))) break;
    ++n;
    pos += 8 + size;
  }
  return n;
}

}  // namespace

std::string DefaultSpillDir() { return absl::StrCat("/tmp/gpuspy-", getuid(), "/spill"); }

SpillFile::~SpillFile() {
  if (fd_ >= 0) close(fd_);
}

absl::Status SpillFile::Create() {
  if (!directory_checked_) {
    if (absl::Status st = EnsurePrivateDirectory(std::filesystem::path(path_).parent_path().string());
        !st.ok()) {
      return st;
    }
    directory_checked_ = true;
  }
  std::string preamble(kMagic, sizeof(kMagic));
  const uint32_t fields[3] = {kVersion, static_cast<uint32_t>(header_.size()),
                              Checksum(header_.data(), header_.size())};
  preamble.append(reinterpret_cast<const char*>(fields), sizeof(fields));
  preamble += header_;
  if (preamble.size() > max_bytes_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("spill bound ", max_bytes_, " bytes is below its header"));
  }
  // Made complete (locked, header written) under a name adopters do not look at, then linked
  // into place: nobody ever sees a spill file without its lock and header. O_EXCL and link():
  // never reuse or replace what is there (the name carries this process's start time, so a file
  // already there is not ours); O_NOFOLLOW: never write through a link to somewhere else.
  const std::string building = path_ + ".new";
  unlink(building.c_str());  // a leftover of ours from a crash half-way through this
  const int fd = open(building.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    directory_checked_ = false;
    return absl::UnavailableError(absl::StrCat("cannot create ", building, ": ", std::strerror(errno)));
  }
  auto fail = [&](const char* what) {
    const int err = errno;
    unlink(building.c_str());
    close(fd);
    return absl::UnavailableError(absl::StrCat("cannot ", what, " ", path_, ": ", std::strerror(err)));
  };
  // Held for as long as this process lives: a free lock tells others the owner is gone.
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) return fail("lock");
  if (!WriteAll(fd, 0, preamble)) return fail("write");
  if (link(building.c_str(), path_.c_str()) != 0) return fail("create");
  unlink(building.c_str());
  fd_ = fd;
  bytes_ = head_ = preamble.size();
  return absl::OkStatus();
}

absl::Status SpillFile::Append(const std::string& batch) {
  const uint64_t record = 8 + batch.size();
  const uint64_t preamble = fd_ < 0 ? kPreambleBytes + header_.size() : 0;
  if (bytes_ + preamble + record > max_bytes_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("spill file ", path_, " would exceed ", max_bytes_, " bytes"));
  }
  if (fd_ < 0) {
    if (absl::Status st = Create(); !st.ok()) return st;
  }
  uint32_t header[2] = {static_cast<uint32_t>(batch.size()), Checksum(batch.data(), batch.size())};
  std::string buf(reinterpret_cast<const char*>(header), sizeof(header));
  buf += batch;
  if (!WriteAll(fd_, bytes_, buf)) {
    const int err = errno;
    // A partial record would poison the tail: cut it back.
    (void)!ftruncate(fd_, static_cast<off_t>(bytes_));
    return absl::UnavailableError(absl::StrCat("cannot write ", path_, ": ", std::strerror(err)));
  }
  bytes_ += buf.size();
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> SpillFile::ReadAll() const {
  std::vector<std::string> out;
  if (empty()) return out;
  SpillReplayResult ignored;
  WalkRecords(fd_, head_, bytes_, [&](const std::string& b) {
    out.push_back(b);
    return true;
  }, &ignored);
  return out;
}

absl::StatusOr<SpillFile::ReplayResult> SpillFile::Replay(
    const std::function<bool(const std::string&)>& deliver) {
  ReplayResult result;
  if (empty()) return result;
  const uint64_t pos = WalkRecords(fd_, head_, bytes_, deliver, &result);
  if (pos >= bytes_ || result.torn) {
    Clear();
    return result;
  }
  // The rest stays where it is; the next replay starts there. The file is not rewritten (the
  // replayed head still counts against the bound until the spill drains completely and the file
  // goes): no copy that could fail half-way, and the disk bound holds. Should this process end
  // now, whoever adopts the file sends the head again, and the collector skips what it stored.
  head_ = pos;
  result.kept = CountRecords(fd_, pos, bytes_);
  return result;
}

void SpillFile::AbandonAfterFork() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  bytes_ = 0;
  head_ = 0;
}

void SpillFile::Clear() {
  if (fd_ >= 0) {
    // Unlinked before the lock goes, so a process waiting to claim it finds it gone.
    unlink(path_.c_str());
    close(fd_);
    fd_ = -1;
  }
  bytes_ = 0;
  head_ = 0;
}

absl::StatusOr<std::unique_ptr<OrphanSpill>> OrphanSpill::Claim(const std::string& path) {
  return Open(path, /*claim=*/true, nullptr);
}

absl::StatusOr<std::unique_ptr<OrphanSpill>> OrphanSpill::Inspect(const std::string& path,
                                                                  bool* held) {
  return Open(path, /*claim=*/false, held);
}

absl::StatusOr<std::unique_ptr<OrphanSpill>> OrphanSpill::Open(const std::string& path, bool claim,
                                                               bool* held) {
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return absl::NotFoundError(absl::StrCat(path, " is gone"));
    return absl::UnavailableError(absl::StrCat("cannot open ", path, ": ", std::strerror(err)));
  }
  auto fail = [fd](absl::Status st) {
    close(fd);
    return st;
  };
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
    return fail(absl::FailedPreconditionError(absl::StrCat(path, " is not our regular file")));
  }
  const bool locked = flock(fd, LOCK_EX | LOCK_NB) == 0;
  if (held != nullptr) *held = !locked;
  if (!claim && locked) flock(fd, LOCK_UN);  // looking only: never keep an owner-to-be out
  if (claim && !locked) {
    return fail(absl::FailedPreconditionError(absl::StrCat(path, " is held by its owner")));
  }
  // Locked: but the previous holder may have delivered and removed it meanwhile.
  if (fstat(fd, &st) != 0 || st.st_nlink == 0) {
    return fail(absl::NotFoundError(absl::StrCat(path, " was delivered already")));
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  char magic[sizeof(kMagic)];
  uint32_t fields[3];
  if (!ReadExactly(fd, 0, magic, sizeof(magic)) ||
      std::memcmp(magic, kMagic, sizeof(kMagic)) != 0 ||
      !ReadExactly(fd, sizeof(magic), reinterpret_cast<char*>(fields), sizeof(fields))) {
    return fail(absl::DataLossError(absl::StrCat(path, " is not a gpuspy spill file")));
  }
  if (fields[0] != kVersion || fields[1] > kMaxHeaderBytes ||
      kPreambleBytes + fields[1] > size) {
    return fail(absl::DataLossError(absl::StrCat(path, ": unknown version or damaged header")));
  }
  std::string header(fields[1], '\0');
  if (!ReadExactly(fd, kPreambleBytes, header.data(), header.size()) ||
      Checksum(header.data(), header.size()) != fields[2]) {
    return fail(absl::DataLossError(absl::StrCat(path, ": damaged header")));
  }
  return std::unique_ptr<OrphanSpill>(
      new OrphanSpill(path, fd, std::move(header), kPreambleBytes + fields[1], size));
}

OrphanSpill::~OrphanSpill() {
  if (fd_ >= 0) close(fd_);
}

absl::StatusOr<SpillReplayResult> OrphanSpill::Replay(
    const std::function<bool(const std::string&)>& deliver) {
  SpillReplayResult result;
  const uint64_t pos = WalkRecords(fd_, data_start_, size_, deliver, &result);
  if (pos < size_ && !result.torn) result.kept = CountRecords(fd_, pos, size_);
  return result;
}

void OrphanSpill::Remove() {
  if (fd_ < 0) return;
  unlink(path_.c_str());
  close(fd_);
  fd_ = -1;
}

}  // namespace gpuspy::inject
