#include "exporters/chrome_trace/chrome_trace_writer.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "exporters/chrome_trace/chrome_trace_stream.h"

namespace gpuspy::exporters {
namespace {

// A file, gzip'd when its name ends in ".gz".
class Sink {
 public:
  explicit Sink(const std::string& path) : gz_(absl::EndsWith(path, ".gz")) {
    errno = 0;
    if (gz_) {
      gzf_ = gzopen(path.c_str(), "wb6");
    } else {
      file_ = std::fopen(path.c_str(), "wb");
    }
    if (!ok()) error_ = errno;
  }
  ~Sink() { (void)Close(); }
  bool ok() const { return gz_ ? gzf_ != nullptr : file_ != nullptr; }
  bool Write(std::string_view s) {
    if (failed_) return false;
    if (gz_) {
      failed_ = gzwrite(gzf_, s.data(), static_cast<unsigned>(s.size())) != static_cast<int>(s.size());
    } else {
      failed_ = std::fwrite(s.data(), 1, s.size(), file_) != s.size();
    }
    if (failed_ && error_ == 0) error_ = errno;
    return !failed_;
  }
  bool Close() {
    bool ok = !failed_;
    if (gzf_ != nullptr) ok &= gzclose(gzf_) == Z_OK;
    if (file_ != nullptr) ok &= std::fclose(file_) == 0;
    if (!ok && error_ == 0) error_ = errno;
    gzf_ = nullptr;
    file_ = nullptr;
    return ok;
  }
  // What the system said when opening or writing failed ("No such file or directory").
  std::string error() const { return std::strerror(error_ != 0 ? error_ : EIO); }

 private:
  bool gz_;
  gzFile gzf_ = nullptr;
  FILE* file_ = nullptr;
  bool failed_ = false;
  int error_ = 0;
};


// The document from processes held in memory.
ExportStats WriteDocument(ChromeTraceStream::Output out,
                          const std::vector<ExportedProcess>& processes) {
  ChromeTraceStream stream(std::move(out), EarliestNs(processes));
  stream.Begin(processes);
  for (const ExportedProcess& p : processes) {
    stream.BeginProcess(p);
    stream.Events(p, p.events);
    stream.EndProcess(p);
  }
  stream.End();
  return {stream.trace_events(), stream.bytes(), stream.not_exported()};
}

}  // namespace

std::string ChromeTraceJson(const std::vector<ExportedProcess>& processes, ExportStats* stats) {
  std::string out;
  const ExportStats s = WriteDocument(
      [&out](std::string_view piece) {
        out.append(piece);
        return true;
      },
      processes);
  if (stats != nullptr) *stats = s;
  return out;
}

absl::Status WriteChromeTrace(const std::string& path, const std::vector<ExportedProcess>& processes,
                              ExportStats* stats) {
  Sink sink(path);
  if (!sink.ok()) return absl::UnavailableError(absl::StrCat("cannot write ", path, ": ", sink.error()));
  const ExportStats s =
      WriteDocument([&sink](std::string_view piece) { return sink.Write(piece); }, processes);
  if (!sink.Close()) {
    return absl::UnavailableError(absl::StrCat("writing ", path, " failed: ", sink.error()));
  }
  if (stats != nullptr) *stats = s;
  return absl::OkStatus();
}

absl::Status WriteChromeTraceFrom(const std::string& path,
                                  const std::vector<ExportedProcess>& processes, int64_t base_ns,
                                  const std::function<absl::Status(ProcessByProcess*)>& fill,
                                  ExportStats* stats) {
  Sink sink(path);
  if (!sink.ok()) return absl::UnavailableError(absl::StrCat("cannot write ", path, ": ", sink.error()));
  ChromeTraceStream stream([&sink](std::string_view piece) { return sink.Write(piece); }, base_ns);
  stream.Begin(processes);
  ProcessByProcess by_process(&stream, &processes);
  if (absl::Status st = fill(&by_process); !st.ok()) return st;
  by_process.Finish();
  if (!stream.End() || !sink.Close()) {
    return absl::UnavailableError(absl::StrCat("writing ", path, " failed: ", sink.error()));
  }
  if (stats != nullptr) *stats = {stream.trace_events(), stream.bytes(), stream.not_exported()};
  return absl::OkStatus();
}

std::string NotExportedLine(const std::map<std::string, uint64_t>& not_exported) {
  if (not_exported.empty()) return "";
  uint64_t total = 0;
  std::string list;
  for (const auto& [what, n] : not_exported) {
    total += n;
    absl::StrAppend(&list, list.empty() ? "" : ", ", n, " ", what);
  }
  return absl::StrCat("a re-import of this trace holds ", total, " event", total == 1 ? "" : "s",
                      " fewer than its source (what the Chrome/Kineto format has no place for, or "
                      "an import does not read back): ", list);
}

std::vector<ExportedProcess> AssembleExport(const std::string& job, uint64_t process_id,
                                            int64_t first_step, int64_t last_step,
                                            const v1::ListJobsResponse& jobs,
                                            const v1::GetStepReportResponse& reports,
                                            std::pair<int64_t, int64_t>* window) {
  std::map<uint64_t, ExportedProcess> by_id;
  for (const auto& j : jobs.jobs()) {
    if (j.job_id() != job) continue;
    for (const auto& p : j.processes()) {
      if (process_id == 0 || p.process_id() == process_id) by_id[p.process_id()].identity = p.identity();
    }
  }
  *window = {0, 0};
  bool any = false;
  for (const auto& r : reports.reports()) {
    if (r.step().number() < first_step || r.step().number() > last_step) continue;
    auto it = by_id.find(r.step().process_id());
    if (it == by_id.end()) continue;
    it->second.steps.push_back(r);
    window->first = any ? std::min(window->first, r.step().start_ns()) : r.step().start_ns();
    window->second = any ? std::max(window->second, r.step().end_ns()) : r.step().end_ns();
    any = true;
  }
  std::vector<ExportedProcess> out;
  for (auto& [id, p] : by_id) {
    p.process_id = id;
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace gpuspy::exporters
