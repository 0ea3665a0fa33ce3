#include "collector/storage/segment_quarantine.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "collector/storage/payload_codec.h"
#include "collector/storage/private_files.h"

namespace gpuspy::collector {

absl::StatusOr<SalvageResult> SalvageRecords(const std::string& path,
                                             const std::vector<IndexedRecord>& records,
                                             SegmentWriter* out) {
  SalvageResult result;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  const std::string open_error = fd < 0 ? absl::StrCat(path, ": ", std::strerror(errno)) : "";
  for (const IndexedRecord& r : records) {
    absl::StatusOr<StoredRecord> stored =
        fd < 0 ? absl::NotFoundError(open_error)
               : ReadStoredRecord(fd, path, r.offset, r.length, r.process_id, r.sequence);
    if (stored.ok() && (stored->flags & kSegmentFlagZstd)) {
      // Copying a record whose payload does not decompress would only move the damage.
      absl::StatusOr<std::string> raw = DecompressPayload(stored->bytes, kMaxStoredPayloadBytes);
      if (!raw.ok()) stored = absl::DataLossError(std::string(raw.status().message()));
    }
    if (!stored.ok()) {
      if (result.first_error.empty()) result.first_error = std::string(stored.status().message());
      result.lost.push_back(r);
      continue;
    }
    absl::StatusOr<uint64_t> offset = out->Append(r.process_id, r.sequence, stored->bytes, stored->flags);
    if (!offset.ok()) {
      if (fd >= 0) close(fd);
      return offset.status();
    }
    result.moved.push_back({r, *offset, stored->bytes.size()});
  }
  if (fd >= 0) close(fd);
  return result;
}

absl::Status MoveToQuarantine(const std::string& path, const std::string& quarantine_dir,
                              const std::string& why) {
  namespace fs = std::filesystem;
  if (absl::Status st = MakePrivateDirectory(quarantine_dir); !st.ok()) return st;
  std::error_code ec;
  const std::string target = quarantine_dir + "/" + fs::path(path).filename().string();
  fs::rename(path, target, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {
    return absl::InternalError(absl::StrCat("cannot move ", path, " to ", target, ": ", ec.message()));
  }
  (void)MakePrivateFile(target + ".why");  // a note beside the file; its mode matters, not its fate
  std::ofstream(target + ".why") << absl::FormatTime(absl::Now()) << " " << why << "\n";
  return absl::OkStatus();
}

}  // namespace gpuspy::collector
