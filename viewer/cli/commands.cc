#include "viewer/cli/commands.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <google/protobuf/util/json_util.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "viewer/cli/composition_view.h"
#include "viewer/cli/format.h"
#include "viewer/cli/json_output.h"
#include "viewer/cli/query_client.h"
#include "viewer/cli/report_view.h"
#include "viewer/cli/table.h"

namespace gpuspy::cli {
namespace {

uint64_t Refusals(const v1::ProcessInfo& p) {
  return p.overload().streams_refused() + p.overload().batches_refused();
}

void PrintProcesses(const v1::ListJobsResponse& resp, const std::string& job, int64_t now) {
  // Only when the collector turned someone away (overload): the usual table stays as it was.
  bool any_refused = false;
  for (const auto& j : resp.jobs()) {
    for (const auto& p : j.processes()) any_refused |= Refusals(p) > 0;
  }
  std::vector<std::string> header = {"JOB",  ">RANK", "HOST",    ">PID",      "GPUS",
                                     "STATE", "MODE", ">EVENTS", "HEARTBEAT", ">CLOCK SKEW"};
  if (any_refused) header.push_back(">REFUSED");
  Table t(header);
  for (const auto& j : resp.jobs()) {
    if (!job.empty() && j.job_id() != job) continue;
    for (const auto& p : j.processes()) {
      const auto& id = p.identity();
      std::set<std::string> gpus;
      for (const auto& d : id.devices()) gpus.insert(d.name());
      std::string gpu_text = gpus.empty() ? "-" : *gpus.begin();
      if (id.devices_size() > 1) gpu_text = absl::StrCat(id.devices_size(), "x ", gpu_text);
      const bool live = p.state() != "disconnected";
      std::vector<std::string> row = {
          j.job_id(), id.rank() >= 0 ? std::to_string(id.rank()) : "-", id.host(),
          std::to_string(id.pid()), gpu_text, p.state(),
          p.mode() == v1::CAPTURE_MODE_DORMANT ? "ondemand" : "always",
          std::to_string(p.event_count()),
          live ? Ago(p.last_heartbeat_unix_ns(), now) : "-",
          live ? FormatDuration(p.clock_skew_ns()) : "-"};
      if (any_refused) row.push_back(std::to_string(Refusals(p)));
      t.Add(std::move(row));
    }
  }
  t.Print(std::cout);
}

}  // namespace

int Jobs(const GlobalOptions& g, const std::string& job, bool per_process) {
  QueryClient q(g.collector, g.timeout_s);
  v1::ListJobsResponse resp;
  if (!q.Call(&v1::Query::Stub::ListJobs, v1::ListJobsRequest(), &resp)) return 1;
  if (!job.empty()) {
    const bool known = std::any_of(resp.jobs().begin(), resp.jobs().end(),
                                   [&](const auto& j) { return j.job_id() == job; });
    if (!known) {
      std::fprintf(stderr, "gpuspy: no job '%s'\n", job.c_str());
      return 1;
    }
  }
  if (g.json) {
    PrintJson(resp);
    return 0;
  }
  if (resp.jobs().empty()) {
    std::cout << "no jobs yet: run a program under gpuspy (gpuspy run -- python train.py)\n";
    return 0;
  }
  const int64_t now = absl::ToUnixNanos(absl::Now());
  if (per_process) {
    PrintProcesses(resp, job, now);
    return 0;
  }
  Table t({"JOB", ">PROCESSES", "RANKS", "HOSTS", "GPUS", ">EVENTS", ">STEPS", "STATE", "LAST SEEN"});
  for (const auto& j : resp.jobs()) {
    std::set<int> ranks;
    std::set<std::string> hosts, gpus;
    std::map<std::string, int> states;  // live processes by state
    for (const auto& p : j.processes()) {
      if (p.identity().rank() >= 0) ranks.insert(p.identity().rank());
      hosts.insert(p.identity().host());
      for (const auto& d : p.identity().devices()) gpus.insert(d.name());
      if (p.state() != "disconnected") ++states[p.state()];
    }
    std::string state_text;
    for (const auto& [state, n] : states) {
      absl::StrAppend(&state_text, state_text.empty() ? "" : ", ", state, " (", n, ")");
    }
    std::string rank_text = ranks.empty() ? "-"
                            : ranks.size() == 1
                                ? std::to_string(*ranks.begin())
                                : std::to_string(*ranks.begin()) + "-" + std::to_string(*ranks.rbegin());
    std::string gpu_text = gpus.empty() ? "-" : *gpus.begin();
    if (gpus.size() > 1) gpu_text += " +" + std::to_string(gpus.size() - 1);
    t.Add({j.job_id(), std::to_string(j.processes_size()), rank_text,
           std::to_string(hosts.size()), gpu_text, std::to_string(j.event_count()),
           std::to_string(j.step_count()),
           state_text.empty() ? "finished" : state_text,
           Ago(j.last_seen_unix_ns(), now)});
  }
  t.Print(std::cout);
  return 0;
}

int Steps(const GlobalOptions& g, const std::string& job, uint64_t process) {
  QueryClient q(g.collector, g.timeout_s);
  v1::ListStepsRequest req;
  req.set_job_id(job);
  req.set_process_id(process);
  v1::ListStepsResponse resp;
  if (!q.Call(&v1::Query::Stub::ListSteps, req, &resp)) return 1;
  if (g.json) {
    PrintJson(resp);
    return 0;
  }
  const auto labels = ProcessLabels(q, job);
  Table t({">RANK", ">STEP", ">START (ns)", ">WALL ms", "SOURCE"});
  for (const auto& s : resp.steps()) {
    t.Add({Label(labels, s.process_id()), std::to_string(s.number()), std::to_string(s.start_ns()),
           Ms(s.end_ns() - s.start_ns()), s.source()});
  }
  if (t.empty()) {
    std::cout << "no steps found for job '" << job
              << "' (no NVTX ranges matched the collector's --step-pattern)\n";
    return 0;
  }
  t.Print(std::cout);
  return 0;
}

int Summary(const GlobalOptions& g, const std::string& job) {
  QueryClient q(g.collector, g.timeout_s);
  v1::GetJobSummaryRequest req;
  req.set_job_id(job);
  v1::GetJobSummaryResponse resp;
  if (!q.Call(&v1::Query::Stub::GetJobSummary, req, &resp)) return 1;
  if (g.json) {
    PrintJson(resp);
    return 0;
  }
  const auto& s = resp.summary();
  std::cout << "job " << s.job_id() << ": " << s.process_count() << " processes, " << s.step_count()
            << " steps (" << s.steady_step_count() << " steady), " << s.event_count() << " events\n"
            << "median step " << Ms(s.median_step_wall_ns()) << " ms, GPU busy "
            << static_cast<int>(s.median_gpu_busy_fraction() * 100 + 0.5) << "%\n";
  if (!s.bottlenecks().empty()) {
    std::cout << "\n";
    Table t({"PRIMARY BOTTLENECK", ">STEPS", ">MEDIAN LOST ms"});
    for (const auto& b : s.bottlenecks()) {
      t.Add({b.detector(), std::to_string(b.steps()), Ms(b.median_lost_ns())});
    }
    t.Print(std::cout);
  }
  if (s.has_largest_gain()) {
    const v1::ExpectedGain& g = s.largest_gain();
    std::cout << "\nlargest expected gain: " << g.detector() << ", ~" << Ms(g.median_lost_ns())
              << " ms per step (median over " << g.steps() << " steady steps)\n";
    if (!g.fix_hint().empty()) std::cout << "  fix: " << g.fix_hint() << "\n";
  }
  if (!s.kernel_classes().empty()) {
    std::cout << "\n";
    PrintGpuTimeTable(s.kernel_classes(), std::cout);
  }
  if (!s.top_kernels().empty()) {
    std::cout << "\n";
    Table t({"TOP KERNEL", ">COUNT", ">TOTAL ms", ">MEDIAN", "TENSOR CORES"});
    for (const auto& k : s.top_kernels()) {
      t.Add({k.name().substr(0, 80), std::to_string(k.count()), Ms(k.total_ns()),
             FormatDuration(k.median_ns()), k.tensor_cores() ? "yes" : "no"});
    }
    t.Print(std::cout);
  }
  return 0;
}

int Events(const GlobalOptions& g, const EventsOptions& e) {
  QueryClient q(g.collector, g.timeout_s);
  v1::GetEventsRequest req;
  req.set_job_id(e.job);
  req.set_process_id(e.process);
  req.set_from_ns(e.from_ns);
  req.set_to_ns(e.to_ns);
  req.set_limit(e.limit);
  v1::GetEventsResponse resp;
  if (!q.Call(&v1::Query::Stub::GetEvents, req, &resp)) return 1;
  if (g.json) {
    PrintJson(resp);
    return 0;
  }
  for (const auto& p : resp.processes()) {
    std::cout << "# process " << p.process_id() << ": " << p.events_size() << " events\n";
    for (const auto& ev : p.events()) {
      std::string line;
      switch (ev.kind_case()) {
        case v1::Event::kKernel:
          line = std::to_string(ev.kernel().start_ns()) + "  " +
                 FormatDuration(ev.kernel().end_ns() - ev.kernel().start_ns()) + "  kernel  stream " +
                 std::to_string(ev.kernel().stream().stream_id()) + "  " + ev.kernel().name();
          break;
        case v1::Event::kMemcpy:
          line = std::to_string(ev.memcpy().start_ns()) + "  " +
                 FormatDuration(ev.memcpy().end_ns() - ev.memcpy().start_ns()) + "  memcpy  " +
                 v1::CopyKind_Name(ev.memcpy().copy_kind()) + " " + FormatBytes(ev.memcpy().bytes()) +
                 (ev.memcpy().async() ? " async" : " sync");
          break;
        case v1::Event::kMemset:
          line = std::to_string(ev.memset().start_ns()) + "  " +
                 FormatDuration(ev.memset().end_ns() - ev.memset().start_ns()) + "  memset  " +
                 FormatBytes(ev.memset().bytes());
          break;
        case v1::Event::kSync:
          line = std::to_string(ev.sync().start_ns()) + "  " +
                 FormatDuration(ev.sync().end_ns() - ev.sync().start_ns()) + "  sync    " +
                 v1::SyncKind_Name(ev.sync().sync_kind());
          break;
        case v1::Event::kMemory:
          line = std::to_string(ev.memory().timestamp_ns()) + "  -  memory  " +
                 v1::MemoryOpKind_Name(ev.memory().op()) + " " + FormatBytes(ev.memory().bytes());
          break;
        case v1::Event::kApi:
          line = std::to_string(ev.api().start_ns()) + "  " +
                 FormatDuration(ev.api().end_ns() - ev.api().start_ns()) + "  api     " +
                 ev.api().name() + "  tid " + std::to_string(ev.api().thread_id());
          break;
        case v1::Event::kNvtxRange:
          line = std::to_string(ev.nvtx_range().start_ns()) + "  " +
                 FormatDuration(ev.nvtx_range().end_ns() - ev.nvtx_range().start_ns()) + "  nvtx    " +
                 ev.nvtx_range().message();
          break;
        case v1::Event::kNvtxMark:
          line = std::to_string(ev.nvtx_mark().timestamp_ns()) + "  -  mark    " +
                 ev.nvtx_mark().message();
          break;
        case v1::Event::kOverhead:
          line = std::to_string(ev.overhead().start_ns()) + "  " +
                 FormatDuration(ev.overhead().end_ns() - ev.overhead().start_ns()) + "  overhead " +
                 ev.overhead().kind();
          break;
        case v1::Event::kGraphLaunch:
          line = std::to_string(ev.graph_launch().start_ns()) + "  " +
                 FormatDuration(ev.graph_launch().end_ns() - ev.graph_launch().start_ns()) +
                 "  graph   id " + std::to_string(ev.graph_launch().graph_id());
          break;
        case v1::Event::kExternalCorrelation:
          line = "-  -  extcorr correlation " +
                 std::to_string(ev.external_correlation().correlation_id()) + " -> external " +
                 std::to_string(ev.external_correlation().external_id());
          break;
        case v1::Event::kMemoryPool:
          line = std::to_string(ev.memory_pool().timestamp_ns()) + "  -  mempool " +
                 v1::MemoryPoolOp_Name(ev.memory_pool().op()) + " " +
                 FormatBytes(ev.memory_pool().size());
          break;
        case v1::Event::kCollective: {
          const v1::Collective& c = ev.collective();
          line = "-  -  collective correlation " + std::to_string(c.correlation_id()) + "  " +
                 c.op() + " " + FormatBytes(c.in_bytes()) + " " + c.dtype() + "  group " +
                 c.group() + " of " + std::to_string(c.group_size());
          break;
        }
        case v1::Event::KIND_NOT_SET:
          continue;
      }
      std::cout << line << "\n";
    }
  }
  if (resp.truncated()) {
    std::cout << "# truncated at " << e.limit << " events: narrow --from/--to or raise --limit\n";
  }
  return 0;
}

namespace {

// Every field of `m`, nested messages as "name.field" (only when present: a node's forwarding).
void AddStatsRows(const google::protobuf::Message& m, const std::string& prefix, Table& t) {
  const auto* d = m.GetDescriptor();
  const auto* r = m.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = d->field(i);
    const std::string name = prefix + f->name();
    switch (f->cpp_type()) {
      case google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE:
        if (r->HasField(m, f)) AddStatsRows(r->GetMessage(m, f), name + ".", t);
        break;
      case google::protobuf::FieldDescriptor::CPPTYPE_UINT64:
        t.Add({name, std::to_string(r->GetUInt64(m, f))});
        break;
      case google::protobuf::FieldDescriptor::CPPTYPE_STRING:
        t.Add({name, r->GetString(m, f)});
        break;
      default:
        break;  // CollectorStats holds counters, names and groups of them
    }
  }
}

}  // namespace

int Stats(const GlobalOptions& g) {
  QueryClient q(g.collector, g.timeout_s);
  v1::GetStatsResponse resp;
  if (!q.Call(&v1::Query::Stub::GetStats, v1::GetStatsRequest(), &resp)) return 1;
  if (g.json) {
    PrintJson(resp);
    return 0;
  }
  Table t({"COUNTER", ">VALUE"});
  AddStatsRows(resp.stats(), "", t);
  t.Print(std::cout);
  return 0;
}

namespace {

// libgpuspy.so: $GPUSPY_LIB, else next to this binary's install or build location. The path is
// made absolute: the command may change directory before the loader of a child reads it.
std::string FindShim() {
  std::error_code ec;
  if (const char* env = std::getenv("GPUSPY_LIB"); env != nullptr && *env != '\0') {
    return std::filesystem::weakly_canonical(env, ec).string();
  }
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const std::filesystem::path dir = exe.parent_path();
  for (const auto& candidate : {dir / "../lib/libgpuspy.so", dir / "../../lib/libgpuspy.so",
                                dir / "libgpuspy.so", dir / "../lib/gpuspy/libgpuspy.so"}) {
    if (std::filesystem::exists(candidate, ec)) {
      return std::filesystem::weakly_canonical(candidate, ec).string();
    }
  }
  return "";
}

}  // namespace

int Run(const GlobalOptions& g, const std::string& job, const std::vector<std::string>& command) {
  if (command.empty()) {
    std::fprintf(stderr, "gpuspy run: nothing to run (usage: gpuspy run -- CMD ARGS...)\n");
    return 2;
  }
  const std::string shim = FindShim();
  if (shim.empty()) {
    std::fprintf(stderr,
                 "gpuspy run: cannot find libgpuspy.so next to the gpuspy binary; set GPUSPY_LIB "
                 "to its path\n");
    return 1;
  }
  // The loader only warns about a missing LD_PRELOAD library and runs the job unprofiled.
  if (std::error_code ec; !std::filesystem::is_regular_file(shim, ec)) {
    std::fprintf(stderr, "gpuspy run: %s (from GPUSPY_LIB) does not exist\n", shim.c_str());
    return 1;
  }
  std::string preload = shim;
  if (const char* existing = std::getenv("LD_PRELOAD"); existing != nullptr && *existing != '\0') {
    preload += std::string(":") + existing;
  }
  setenv("LD_PRELOAD", preload.c_str(), 1);
  setenv("GPUSPY_COLLECTOR", g.collector.c_str(), 1);
  if (!job.empty()) setenv("GPUSPY_JOB", job.c_str(), 1);
  std::vector<char*> argv;
  for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  std::fprintf(stderr, "gpuspy run: cannot run %s: %s\n", argv[0], std::strerror(errno));
  return 127;
}

}  // namespace gpuspy::cli
