#include "inject/core/spill_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "inject/core/private_directory.h"

namespace gpuspy::inject {
namespace {

// FNV-1a: enough to detect a torn tail; this is not an integrity guarantee against tampering.
uint32_t Checksum(const char* data, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; ++i) {
    h ^= static_cast<uint8_t>(data[i]);
    h *= 16777619u;
  }
  return h;
}

}  // namespace

absl::Status SpillFile::Append(const std::string& batch) {
  const uint64_t record = 8 + batch.size();
  if (bytes_ + record > max_bytes_) {
    return absl::ResourceExhaustedError(
        absl::StrCat("spill file ", path_, " would exceed ", max_bytes_, " bytes"));
  }
  if (!directory_checked_) {
    if (absl::Status st = EnsurePrivateDirectory(std::filesystem::path(path_).parent_path().string());
        !st.ok()) {
      return st;
    }
    directory_checked_ = true;
  }
  // O_NOFOLLOW: even in our own directory, never write through a link to somewhere else.
  const int fd = open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat("cannot open ", path_, ": ", std::strerror(errno)));
  }
  uint32_t header[2] = {static_cast<uint32_t>(batch.size()), Checksum(batch.data(), batch.size())};
  std::string buf(reinterpret_cast<const char*>(header), sizeof(header));
  buf += batch;
  const ssize_t written = write(fd, buf.data(), buf.size());
  const int err = errno;
  close(fd);
  if (written != static_cast<ssize_t>(buf.size())) {
    // A partial record would poison the tail: cut it back.
    if (written > 0) (void)!truncate(path_.c_str(), static_cast<off_t>(bytes_));
    return absl::UnavailableError(
        absl::StrCat("cannot write ", path_, ": ", written < 0 ? std::strerror(err) : "short write"));
  }
  bytes_ += buf.size();
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> SpillFile::ReadAll() const {
  std::vector<std::string> out;
  if (empty()) return out;
  std::ifstream in(path_, std::ios::binary);
  if (!in) return absl::UnavailableError(absl::StrCat("cannot read ", path_));
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t pos = head_;
  while (pos + 8 <= all.size()) {
    uint32_t header[2];
    std::memcpy(header, all.data() + pos, sizeof(header));
    if (pos + 8 + header[0] > all.size()) break;
    if (Checksum(all.data() + pos + 8, header[0]) != header[1]) break;
    out.emplace_back(all.substr(pos + 8, header[0]));
    pos += 8 + header[0];
  }
  return out;
}

namespace {

// pread until `n` bytes or the end of the file; false on errors or a short read.
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

}  // namespace

absl::StatusOr<SpillFile::ReplayResult> SpillFile::Replay(
    const std::function<bool(const std::string&)>& deliver) {
  ReplayResult result;
  if (empty()) return result;
  const int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    const int err = errno;
    Clear();
    return absl::UnavailableError(absl::StrCat("cannot read ", path_, ": ", std::strerror(err)));
  }
  uint64_t pos = head_;
  std::string batch;
  while (pos < bytes_) {
    uint32_t header[2];
    if (pos + 8 > bytes_ || !ReadExactly(fd, pos, reinterpret_cast<char*>(header), sizeof(header)) ||
        pos + 8 + header[0] > bytes_) {
      result.torn = true;
      break;
    }
    batch.resize(header[0]);
    if (!ReadExactly(fd, pos + 8, batch.data(), batch.size()) ||
        Checksum(batch.data(), batch.size()) != header[1]) {
      result.torn = true;
      break;
    }
    if (!deliver(batch)) break;
    ++result.delivered;
    pos += 8 + header[0];
  }
  if (pos >= bytes_ || result.torn) {
    close(fd);
    Clear();
    return result;
  }
  // The rest stays where it is; the next replay starts there. The file is not rewritten (the
  // replayed head still counts against the bound until the spill drains completely and the file
  // goes): no copy that could fail half-way, and the disk bound holds.
  head_ = pos;
  for (uint64_t p = pos; p + 8 <= bytes_;) {
    uint32_t size = 0;
    if (!ReadExactly(fd, p, reinterpret_cast<char*>(&size), sizeof(size))) break;
    ++result.kept;
    p += 8 + size;
  }
  close(fd);
  return result;
}

void SpillFile::Clear() {
  unlink(path_.c_str());
  bytes_ = 0;
  head_ = 0;
}

}  // namespace gpuspy::inject
