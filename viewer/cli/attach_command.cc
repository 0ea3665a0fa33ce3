#include "viewer/cli/attach_command.h"

#include <sys/types.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <thread>

#include <google/protobuf/util/json_util.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "analysis/text_form.h"
#include "viewer/cli/attach_pid_command.h"
#include "viewer/cli/command_registry.h"
#include "viewer/cli/json_output.h"
#include "viewer/cli/process_id_option.h"
#include "viewer/cli/query_client.h"
#include "viewer/cli/report_view.h"

namespace gpuspy::cli {
namespace {

constexpr absl::Duration kPollPeriod = absl::Milliseconds(500);

const char* CaptureStateName(v1::CaptureState s) {
  switch (s) {
    case v1::CAPTURE_STATE_ARMED: return "armed";
    case v1::CAPTURE_STATE_CAPTURING: return "capturing";
    case v1::CAPTURE_STATE_DRAINING: return "draining";
    case v1::CAPTURE_STATE_DONE: return "done";
    case v1::CAPTURE_STATE_STOPPED: return "stopped";
    case v1::CAPTURE_STATE_FAILED: return "failed";
    case v1::CAPTURE_STATE_EXITED: return "exited";
    default: return "arming";
  }
}

std::string Who(const v1::CaptureProcess& p) {
  return p.rank() >= 0 ? absl::StrCat("rank ", p.rank())
                       : absl::StrCat("pid ", p.pid(), "@", p.host());
}

// "rank 0 capturing 3/10, rank 1 armed 0/10"
std::string Progress(const v1::Capture& c) {
  std::vector<std::string> parts;
  for (const v1::CaptureProcess& p : c.processes()) {
    std::string part = absl::StrCat(Who(p), " ", CaptureStateName(p.status().state()), " ",
                                     p.status().steps_captured());
    if (p.steps_wanted() > 0) absl::StrAppend(&part, "/", p.steps_wanted());
    parts.push_back(part);
  }
  return absl::StrJoin(parts, ", ");
}

// The reports of the steps each process captured (its window, on its own clock); with `steps`,
// at most that many per process (a window closed by the collector's step count may hold more).
v1::GetStepReportResponse CapturedSteps(const v1::Capture& c, const v1::GetStepReportResponse& all,
                                        uint32_t steps) {
  std::map<uint64_t, const v1::CaptureStatus*> windows;
  for (const v1::CaptureProcess& p : c.processes()) windows[p.process_id()] = &p.status();
  std::map<uint64_t, uint32_t> kept;
  v1::GetStepReportResponse out;
  for (const v1::StepReport& r : all.reports()) {
    auto it = windows.find(r.step().process_id());
    if (it == windows.end() || it->second->window_start_ns() == 0) continue;
    const int64_t end = it->second->window_end_ns() > 0 ? it->second->window_end_ns()
                                                          : std::numeric_limits<int64_t>::max();
    if (r.step().start_ns() >= it->second->window_start_ns() && r.step().start_ns() < end &&
        (steps == 0 || kept[r.step().process_id()]++ < steps)) {
      *out.add_reports() = r;
    }
  }
  return out;
}

// A window that could not align to NVTX step ranges (none in the program, or NVTX not hooked
// because gpuspy was attached after the program's first NVTX call) has no step count of its own:
// the collector finds those steps by their repetition. True once it has found `steps` complete
// steps inside every such window (one more than asked: the last one found may still be growing).
bool CollectorFoundTheSteps(QueryClient& q, const std::string& job, const v1::Capture& c,
                            uint32_t steps) {
  std::map<uint64_t, int64_t> window_start;
  for (const v1::CaptureProcess& p : c.processes()) {
    const v1::CaptureStatus& s = p.status();
    if (s.state() != v1::CAPTURE_STATE_CAPTURING) continue;
    if (s.step_aligned() || s.window_start_ns() == 0) return false;
    window_start[p.process_id()] = s.window_start_ns();
  }
  if (window_start.empty()) return false;
  v1::ListStepsRequest req;
  req.set_job_id(job);
  v1::ListStepsResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  if (!q.stub()->ListSteps(&ctx, req, &resp).ok()) return false;
  std::map<uint64_t, uint32_t> found;
  for (const v1::Step& st : resp.steps()) {
    auto it = window_start.find(st.process_id());
    if (it != window_start.end() && st.start_ns() >= it->second) ++found[st.process_id()];
  }
  for (const auto& [process, start] : window_start) {
    if (found[process] < steps + 1) return false;
  }
  return true;
}

}  // namespace

int Attach(const GlobalOptions& g, const AttachOptions& a) {
  v1::AttachRequest req;
  req.set_job_id(a.job);
  req.set_rank(a.rank);
  req.set_host(a.host);
  for (const std::string& key : a.process_keys) req.add_process_keys(key);
  v1::StartCapture* cap = req.mutable_capture();
  cap->set_steps(a.steps);
  absl::Duration duration = absl::ZeroDuration(), start_timeout, wait = absl::ZeroDuration();
  if (!a.duration.empty() && !absl::ParseDuration(a.duration, &duration)) {
    std::fprintf(stderr, "gpuspy: --duration '%s' is not a duration (e.g. 30s, 2m)\n", a.duration.c_str());
    return 2;
  }
  if (!absl::ParseDuration(a.start_timeout, &start_timeout)) {
    std::fprintf(stderr, "gpuspy: --start-timeout '%s' is not a duration\n", a.start_timeout.c_str());
    return 2;
  }
  if (!a.wait.empty() && !absl::ParseDuration(a.wait, &wait)) {
    std::fprintf(stderr, "gpuspy: --wait '%s' is not a duration\n", a.wait.c_str());
    return 2;
  }
  if (a.steps == 0 && duration <= absl::ZeroDuration()) {
    std::fprintf(stderr, "gpuspy: attach needs --steps N or --duration D\n");
    return 2;
  }
  cap->set_duration_ns(absl::ToInt64Nanoseconds(duration));
  cap->set_start_timeout_ns(absl::ToInt64Nanoseconds(start_timeout));
  for (const std::string& k : a.kinds) cap->add_kinds(k);

  QueryClient q(g.collector, g.timeout_s);
  v1::AttachResponse armed;
  if (!q.Control(&v1::Control::Stub::Attach, req, &armed)) return 1;
  if (!g.json) {
    std::cout << "capture " << armed.capture_id() << ": "
              << analysis::CountOf(armed.processes_armed(), "process", "processes") << " of job " << a.job << " armed for "
              << (a.steps > 0 ? absl::StrCat(a.steps, " steps") : absl::FormatDuration(duration))
              << "\n";
    for (const std::string& n : armed.notes()) std::cout << "  note: " << n << "\n";
  }
  if (a.detach) {
    if (g.json) {
      PrintJson(g, armed);
    } else {
      std::cout << "detached: follow with `gpuspy report --job " << a.job
                << "`, stop early with `gpuspy detach --job " << a.job << "`\n";
    }
    return 0;
  }

  // Generous by default: steps can be long, and the window waits for the next boundary first.
  if (wait <= absl::ZeroDuration()) {
    wait = std::max(absl::Minutes(10), start_timeout + 2 * duration + absl::Minutes(1));
  }
  const absl::Time give_up = absl::Now() + wait;
  v1::GetCaptureRequest get;
  get.set_job_id(a.job);
  get.set_capture_id(armed.capture_id());
  v1::GetCaptureResponse got;
  std::string last_progress;
  bool closing = false;  // the CLI closed an unaligned window after the collector's step count
  const bool tty = isatty(STDOUT_FILENO) && !g.json;
  for (;;) {
    got.Clear();
    grpc::Status st = q.ControlStatus(&v1::Control::Stub::GetCapture, get, &got);
    if (st.error_code() == grpc::StatusCode::NOT_FOUND) {
      std::fprintf(stderr,
                   "gpuspy: the collector no longer knows capture %llu (it restarted?). The "
                   "processes finish their windows on their own and deliver them when they "
                   "reconnect: see `gpuspy report --job %s`\n",
                   static_cast<unsigned long long>(armed.capture_id()), a.job.c_str());
      return 1;
    }
    if (!q.Status(st)) return 1;
    const std::string progress = Progress(got.capture());
    if (!g.json && progress != last_progress) {
      if (tty) {
        std::cout << "\r\033[K" << progress << std::flush;
      } else {
        std::cout << progress << "\n" << std::flush;
      }
      last_progress = progress;
    }
    if (!got.capture().active()) break;
    if (a.steps > 0 && duration <= absl::ZeroDuration() && !closing &&
        CollectorFoundTheSteps(q, a.job, got.capture(), a.steps)) {
      // Closed like `gpuspy detach --job`: the processes end the window with what they traced.
      v1::DetachRequest stop;
      stop.set_job_id(a.job);
      v1::DetachResponse stopped;
      closing = q.Control(&v1::Control::Stub::Detach, stop, &stopped);
      if (closing && !g.json) {
        std::cout << (tty ? "\r\033[K" : "") << "no NVTX step ranges: " << a.steps
                  << " steps found by their repetition; closing the window\n" << std::flush;
      }
    }
    if (absl::Now() >= give_up) {
      if (tty) std::cout << "\n";
      std::fprintf(stderr,
                   "gpuspy: capture %llu still running after %s (%s); it goes on in the "
                   "processes: `gpuspy detach --job %s` stops it\n",
                   static_cast<unsigned long long>(armed.capture_id()),
                   absl::FormatDuration(wait).c_str(), progress.c_str(), a.job.c_str());
      return 3;
    }
    absl::SleepFor(kPollPeriod);
  }
  if (tty) std::cout << "\n";

  const v1::Capture& c = got.capture();
  // The last batches of each window are acknowledged before the process reports DONE, so the
  // reports below see everything.
  v1::GetStepReportRequest rr;
  rr.set_job_id(a.job);
  rr.set_all(true);
  v1::GetStepReportResponse all;
  const bool have_reports = q.Call(&v1::Query::Stub::GetStepReport, rr, &all);
  const v1::GetStepReportResponse mine = have_reports ? CapturedSteps(c, all, a.steps) : all;
  std::map<uint64_t, int> reported;
  for (const v1::StepReport& r : mine.reports()) ++reported[r.step().process_id()];
  int captured = 0, failed = 0;
  for (const v1::CaptureProcess& p : c.processes()) {
    // Steps the process counted, or (without NVTX steps) the collector found in its window.
    captured += p.status().steps_captured() > 0 || reported[p.process_id()] > 0 ||
                (p.status().state() == v1::CAPTURE_STATE_DONE && !p.status().step_aligned());
    failed += p.status().state() == v1::CAPTURE_STATE_FAILED;
  }
  if (g.json) {
    PrintJson(g, c);
    PrintJson(g, mine);
    return failed > 0 || captured == 0 ? 1 : 0;
  }
  for (const v1::CaptureProcess& p : c.processes()) {
    const v1::CaptureStatus& s = p.status();
    // A window this command closed after the collector's count ended as planned, not early.
    const bool counted = closing && !s.step_aligned() && s.state() == v1::CAPTURE_STATE_STOPPED;
    std::cout << "  " << Who(p) << " (pid " << p.pid() << " on " << p.host() << "): "
              << (counted ? "done" : CaptureStateName(s.state())) << ", "
              << (counted ? reported[p.process_id()] : static_cast<int>(s.steps_captured()))
              << " steps, " << s.events_sent() << " events"
              << (counted ? ", steps found by their repetition (no NVTX step ranges)"
                  : s.step_aligned() || s.window_start_ns() == 0 ? ""
                                                                 : ", not step-aligned (no NVTX step ranges)");
    if (!s.message().empty()) std::cout << " - " << s.message();
    std::cout << "\n";
  }
  if (!have_reports) return 1;
  if (mine.reports().empty()) {
    std::cout << "no steps were captured";
    if (captured > 0) std::cout << " (the program marks no NVTX steps the collector recognises: "
                                   "see `gpuspy report --job " << a.job << "`)";
    std::cout << "\n";
  } else {
    std::cout << "\n";
    PrintStepReports(q, a.job, mine);
  }
  return failed > 0 || captured == 0 ? 1 : 0;
}

int Detach(const GlobalOptions& g, const std::string& job) {
  QueryClient q(g.collector, g.timeout_s);
  v1::DetachRequest req;
  req.set_job_id(job);
  v1::DetachResponse resp;
  if (!q.Control(&v1::Control::Stub::Detach, req, &resp)) return 1;
  if (g.json) {
    PrintJson(g, resp);
    return 0;
  }
  std::cout << "capture " << resp.capture_id() << ": "
            << analysis::CountOf(resp.processes_stopped(), "process", "processes") << " told to stop; what they captured so far is kept\n";
  return 0;
}

RegisteredCommand RegisterAttachCommand(CLI::App& app, const GlobalOptions& g) {
  struct Options {
    AttachOptions at;
    ProcessSelector to;
  };
  auto o = std::make_shared<Options>();
  AttachOptions& at = o->at;
  auto* attach = app.add_subcommand(
      "attach", "Capture N steps (or a duration) of a live job, then print their reports: a job "
                "whose processes run dormant (GPUSPY_MODE=ondemand), or running processes "
                "started without gpuspy (--pid, --match, --cgroup)");
  attach->add_option("--job", at.job,
                     "Job id (with --pid/--match/--cgroup: the name to give their job)");
  attach->add_option("--pid", o->to.pids,
                     "Load gpuspy into this running process first (ptrace; its owner or root)")
      ->check(ProcessIdValidator());
  attach->add_option("--match", o->to.match,
                     "... into every running CUDA process whose command line matches this regex");
  attach->add_option("--cgroup", o->to.cgroup,
                     "... into the CUDA processes of this cgroup directory (a SLURM job, a pod)")
      ->check(CLI::ExistingDirectory);
  attach->add_option("--rank", at.rank, "Only this rank");
  attach->add_option("--host", at.host, "Only processes on this host");
  attach->add_option("--steps", at.steps, "Capture this many steps")
                       ->check(CLI::PositiveNumber);
  attach->add_option("--duration", at.duration, "Capture for this long (30s, 2m)");
  attach->add_option("--kinds", at.kinds, "Only these kinds (kernel,memcpy,memset,sync,memory,runtime,driver,nvtx,overhead)")
      ->delimiter(',');
  auto* start_timeout = attach->add_option("--start-timeout", at.start_timeout,
                                           "Wait this long for an NVTX step boundary, then start anyway")
                            ->capture_default_str();
  attach->add_flag("--detach", at.detach, "Return once the processes are armed");
  attach->add_option("--wait", at.wait, "Give up waiting for the capture after this long");
  attach->footer("Examples: gpuspy attach --job 1234 --steps 20\n"
                 "          gpuspy attach --pid 4242 --steps 10");
  return {attach, [&g, o, start_timeout] {
            if (!o->to.empty()) {
              // A program gpuspy joins late has its NVTX unhooked (README): waiting for an NVTX
              // range would usually only delay the first event; a program whose NVTX is hooked
              // and whose steps are shorter than this still gets an aligned window.
              if (start_timeout->count() == 0) o->at.start_timeout = "200ms";
              return AttachToProcesses(g, o->at, o->to);
            }
            if (o->at.job.empty()) {
              std::fprintf(stderr, "gpuspy attach: say which job (--job) or which processes (--pid, "
                                   "--match, --cgroup)\n");
              return 2;
            }
            return Attach(g, o->at);
          }};
}

RegisteredCommand RegisterDetachCommand(CLI::App& app, const GlobalOptions& g) {
  struct Options {
    std::string job;
    pid_t pid = 0;
  };
  auto o = std::make_shared<Options>();
  auto* detach = app.add_subcommand(
      "detach", "Stop a running capture early (what was captured is kept); with --pid, also end "
                "gpuspy's session in a process it was attached to");
  auto* job = detach->add_option("--job", o->job, "Job id");
  detach->add_option("--pid", o->pid, "A process gpuspy was attached to with --pid")
      ->check(ProcessIdValidator())->excludes(job);
  return {detach, [&g, o] {
            if (o->pid > 0) return DetachFromProcess(g, o->pid);
            if (o->job.empty()) {
              std::fprintf(stderr, "gpuspy detach: say which job (--job) or which process (--pid)\n");
              return 2;
            }
            return Detach(g, o->job);
          }};
}

}  // namespace gpuspy::cli
