// Chrome trace JSON written piece by piece (chrome_trace_writer.h has the layout): the document's
// head, then each process's events in as many calls as there are pages, then its steps. What it
// holds is one output buffer, the names of the tracks written so far and the collectives still
// waiting for their kernel, so gpuspyd streams a job's trace over HTTP without holding the job
// (issue 22: a whole-job export was one string).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "exporters/chrome_trace/chrome_trace_writer.h"
#include "nlohmann/json_fwd.hpp"

namespace gpuspy::exporters {

class ChromeTraceStream {
 public:
  // Receives the document in pieces of about kFlushBytes; false = it takes no more (a client
  // went away, a disk filled): the rest is dropped and ok() turns false.
  using Output = std::function<bool(std::string_view piece)>;
  static constexpr size_t kFlushBytes = 256 << 10;

  // Timestamps are written relative to `base_ns` (at most the earliest event's start).
  ChromeTraceStream(Output out, int64_t base_ns) : out_(std::move(out)), base_ns_(base_ns) {}

  // The head: time base, distributedInfo (for one process with a rank), the devices of all.
  void Begin(const std::vector<ExportedProcess>& processes);
  // Opens `p`'s trace process (its name); its `events` are not read here.
  void BeginProcess(const ExportedProcess& p);
  // Some of `p`'s events (a page of GetEvents, or all of them). A collective's args go onto its
  // kernel when both come in the same call or the collective in an earlier one: producers keep
  // them in one batch, where the collective (untimed) comes first.
  void Events(const ExportedProcess& p, const std::vector<v1::Event>& events);
  // `p`'s step ranges and findings, after its last Events.
  void EndProcess(const ExportedProcess& p);
  // Closes the document and hands out what is left. Returns ok().
  bool End();

  bool ok() const { return ok_; }
  // Events a re-import of the document will lack, by what they are: those the format has no
  // place for ("device memory allocation/free records") and NVTX marks, written as instant
  // events an import skips. An export and its re-import differ by exactly these, and the
  // document ends saying so ("gpuspyNotExported").
  const std::map<std::string, uint64_t>& not_exported() const { return not_exported_; }
  uint64_t trace_events() const { return count_; }
  uint64_t bytes() const { return bytes_; }

 private:
  void Write(std::string_view s);
  void Flush();
  void Emit(const nlohmann::json& e);
  void Meta(const char* what, int64_t pid, int64_t tid, const std::string& name);
  double Us(int64_t ns) const { return static_cast<double>(ns - base_ns_) / 1000.0; }
  nlohmann::json Span(const std::string& cat, const std::string& name, int64_t pid, int64_t tid,
                      int64_t start, int64_t end) const;
  int64_t StreamTrack(int64_t pid, const v1::StreamRef& s);
  // A host thread's track, named on first use ("thread 1234", the process's main thread so
  // marked): without a name Perfetto shows a bare number beside the named stream tracks.
  int64_t HostTrack(const ExportedProcess& p, int64_t pid, int64_t tid);

  Output out_;
  int64_t base_ns_;
  std::string buffer_;
  bool ok_ = true;
  bool first_ = true;
  uint64_t count_ = 0;
  uint64_t bytes_ = 0;
  std::set<std::pair<int64_t, int64_t>> streams_named_;  // (pid, tid) with a thread_name
  std::set<std::pair<int64_t, int64_t>> hosts_named_;    // (pid, tid) of host threads named
  // Collectives of earlier calls whose kernel has not come yet, by correlation id.
  std::unordered_map<uint64_t, v1::Collective> pending_;
  std::map<std::string, uint64_t> not_exported_;
};

// Events that arrive process by process in id order (pages of GetEvents) into
// `stream`, for `processes` sorted by id (as AssembleExport returns them): each process is opened
// and closed once, in order, those without events included.
class ProcessByProcess {
 public:
  ProcessByProcess(ChromeTraceStream* stream, const std::vector<ExportedProcess>* processes)
      : stream_(stream), processes_(processes) {}
  // Events of a process not among `processes` are dropped.
  void Events(uint64_t process_id, const std::vector<v1::Event>& events);
  // A page of GetEvents (its events are moved out).
  void Page(v1::GetEventsResponse* page);
  // Closes the open process and writes those left.
  void Finish();

 private:
  void OpenUntil(uint64_t process_id);

  ChromeTraceStream* stream_;
  const std::vector<ExportedProcess>* processes_;
  size_t next_ = 0;
  const ExportedProcess* open_ = nullptr;
};

// The time base of a trace written from pages of GetEvents: the first page's earliest_ns, or a
// step that starts before it.
int64_t PagedBaseNs(const v1::GetEventsResponse& first_page,
                    const std::vector<ExportedProcess>& processes);

// The earliest time of `processes`' events and steps (0 when none): the in-memory writers' base.
int64_t EarliestNs(const std::vector<ExportedProcess>& processes);

}  // namespace gpuspy::exporters
