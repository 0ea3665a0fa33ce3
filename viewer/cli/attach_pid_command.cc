#include "viewer/cli/attach_pid_command.h"

#include <signal.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/attach/injector.h"
#include "client/attach/preflight.h"
#include "re2/re2.h"
#include "viewer/cli/installed_library.h"
#include "viewer/cli/process_key.h"
#include "viewer/cli/query_client.h"

namespace gpuspy::cli {
namespace {

constexpr char kStubName[] = "libgpuspy_inject.so";
// Loading the core (gRPC, CUPTI) and subscribing, inside the target, on its own thread.
constexpr auto kSessionStartTimeout = std::chrono::seconds(30);
// The new session's first contact with gpuspyd.
constexpr auto kRegisterTimeout = std::chrono::seconds(20);
constexpr auto kPoll = std::chrono::milliseconds(50);
// The settings passed on to the target: where gpuspyd is, and how to prove who we are to it.
constexpr const char* kPassedOn[] = {"GPUSPY_TOKEN", "GPUSPY_TOKEN_FILE", "GPUSPY_TLS_CA",
                                     "GPUSPY_TLS_CERT", "GPUSPY_TLS_KEY", "GPUSPY_LOG",
                                     "GPUSPY_CALLSITES", "GPUSPY_SPILL_DIR"};

void Fail(const std::string& what) { std::fprintf(stderr, "gpuspy: %s\n", what.c_str()); }

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A private directory under the target's own /tmp (its mount namespace's, through /proc/N/root),
// owned by the target's user, with the settings file the stub is given; removed on scope exit.
class SettingsDir {
 public:
  static absl::StatusOr<SettingsDir> Create(const attach::Target& t) {
    std::string templ = attach::TargetPath(t.pid, "/tmp/gpuspy-attach-XXXXXX");
    if (mkdtemp(templ.data()) == nullptr) {
      return absl::InternalError(absl::StrCat("cannot create a directory under /proc/", t.pid,
                                              "/root/tmp: ", std::strerror(errno)));
    }
    SettingsDir d;
    d.here_ = templ;
    d.there_ = templ.substr(attach::TargetPath(t.pid, "").size());
    // The process reads the settings and writes its result as its own user.
    if (geteuid() == 0 && chown(templ.c_str(), t.status.real_uid, static_cast<gid_t>(-1)) != 0) {
      return absl::InternalError(absl::StrCat("chown ", templ, ": ", std::strerror(errno)));
    }
    return d;
  }
  SettingsDir(SettingsDir&& o) noexcept : here_(std::move(o.here_)), there_(std::move(o.there_)) {
    o.here_.clear();
  }
  ~SettingsDir() {
    std::error_code ec;
    if (!here_.empty()) std::filesystem::remove_all(here_, ec);
  }
  absl::Status Write(const attach::Target& t, const std::string& settings) {
    const std::string path = here_ + "/settings";
    {
      std::ofstream out(path);
      out << settings;
      if (!out.flush()) return absl::InternalError(absl::StrCat("cannot write ", path));
    }
    chmod(path.c_str(), 0600);
    if (geteuid() == 0) (void)chown(path.c_str(), t.status.real_uid, static_cast<gid_t>(-1));
    return absl::OkStatus();
  }
  std::string settings_in_target() const { return there_ + "/settings"; }
  // Waits for the target's one-line result (inject/core/attach_config.h), tab-separated.
  absl::StatusOr<std::vector<std::string>> AwaitResult(pid_t pid, std::chrono::seconds timeout) const {
    const std::string path = here_ + "/settings.result";
    const auto give_up = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < give_up) {
      std::string line = ReadWhole(path);
      if (!line.empty() && line.back() == '\n') {
        line.pop_back();
        return std::vector<std::string>(absl::StrSplit(line, '\t'));
      }
      if (kill(pid, 0) != 0 && errno == ESRCH) {
        return absl::NotFoundError(absl::StrCat("pid ", pid, " exited before gpuspy started in it"));
      }
      std::this_thread::sleep_for(kPoll);
    }
    return absl::DeadlineExceededError(absl::StrCat(
        "pid ", pid, " did not report within ", timeout.count(),
        " s whether gpuspy started (its stderr may say why)"));
  }

 private:
  SettingsDir() = default;
  std::string here_, there_;
};

std::string Settings(const GlobalOptions& g, const AttachOptions& a) {
  std::string s = absl::StrCat("GPUSPY_COLLECTOR=", g.collector, "\n");
  if (!a.job.empty()) absl::StrAppend(&s, "GPUSPY_JOB=", a.job, "\n");
  for (const char* name : kPassedOn) {
    if (const char* v = std::getenv(name); v != nullptr && *v != '\0') absl::StrAppend(&s, name, "=", v, "\n");
  }
  return s;
}

absl::StatusOr<std::string> StubFor(const attach::Target& t) {
  const std::string stub = FindInstalledLibrary(kStubName, "GPUSPY_INJECT_LIB");
  if (stub.empty()) {
    return absl::NotFoundError(absl::StrCat("cannot find ", kStubName,
                                            " next to the gpuspy binary; set GPUSPY_INJECT_LIB"));
  }
  if (access(attach::TargetPath(t.pid, stub).c_str(), R_OK) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "pid ", t.pid, " cannot see ", stub, " (it runs in another mount namespace, e.g. a "
        "container): install gpuspy where the job sees it and set GPUSPY_INJECT_LIB"));
  }
  return stub;
}

// Every signal that would end this command is held until the target is let go: it must never be
// left stopped, or with our call half done (attach/traced_thread.h).
class HoldSignals {
 public:
  HoldSignals() {
    sigset_t s;
    sigemptyset(&s);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) sigaddset(&s, sig);
    pthread_sigmask(SIG_BLOCK, &s, &old_);
  }
  ~HoldSignals() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

 private:
  sigset_t old_;
};

struct Attached {
  pid_t pid;
  std::string job;
  std::string process_key;
};

absl::StatusOr<Attached> LoadInto(const GlobalOptions& g, const AttachOptions& a, pid_t pid, bool json) {
  absl::StatusOr<attach::Target> target = attach::Preflight(pid);
  if (!target.ok()) return target.status();
  absl::StatusOr<std::string> stub = StubFor(*target);
  if (!stub.ok()) return stub.status();
  absl::StatusOr<SettingsDir> dir = SettingsDir::Create(*target);
  if (!dir.ok()) return dir.status();
  if (absl::Status st = dir->Write(*target, Settings(g, a)); !st.ok()) return st;
  absl::StatusOr<attach::RemoteCallResult> call;
  {
    HoldSignals hold;
    call = attach::CallInProcess(*target, *stub, "gpuspy_attach", dir->settings_in_target(),
                                 attach::LoadPolicy::kLoad);
  }
  if (!call.ok()) return call.status();
  if (call->value != 0) {
    return absl::InternalError(absl::StrCat("pid ", pid, ": gpuspy_attach returned ", call->value));
  }
  if (!json) {
    std::cout << "pid " << pid << " (" << target->status.name << "): gpuspy loaded; its thread "
              << "was stopped for "
              << std::chrono::duration_cast<std::chrono::microseconds>(call->pause).count()
              << " us\n" << std::flush;
  }
  absl::StatusOr<std::vector<std::string>> result = dir->AwaitResult(pid, kSessionStartTimeout);
  if (!result.ok()) return result.status();
  if (result->size() < 3 || (*result)[0] != "ok") {
    return absl::FailedPreconditionError(absl::StrCat(
        "pid ", pid, ": gpuspy did not start: ", result->size() > 1 ? (*result)[1] : "no reason given",
        "; the process runs on untouched"));
  }
  return Attached{.pid = pid, .job = (*result)[1], .process_key = (*result)[2]};
}

// Waits until gpuspyd lists the new session's process in its job.
absl::Status AwaitRegistration(QueryClient& q, const Attached& a) {
  const auto give_up = std::chrono::steady_clock::now() + kRegisterTimeout;
  while (std::chrono::steady_clock::now() < give_up) {
    v1::ListJobsResponse jobs;
    grpc::ClientContext ctx;  // quiet: a miss here is retried, not reported
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    if (q.stub()->ListJobs(&ctx, v1::ListJobsRequest(), &jobs).ok()) {
      for (const v1::JobInfo& j : jobs.jobs()) {
        if (j.job_id() != a.job) continue;
        for (const v1::ProcessInfo& p : j.processes()) {
          if (SameProcessKey(p.identity().process_key(), a.process_key) &&
              p.state() != "disconnected") {
            return absl::OkStatus();
          }
        }
      }
    }
    std::this_thread::sleep_for(kPoll);
  }
  return absl::DeadlineExceededError(absl::StrCat(
      "pid ", a.pid, " started gpuspy but did not reach the collector at ", q.address(),
      " within ", std::chrono::duration_cast<std::chrono::seconds>(kRegisterTimeout).count(),
      " s (can the process reach it? a token it needs?)"));
}

// The same rule as the checks (attach::LoadsCuda); a process that cannot be read is not one.
bool IsCudaProcess(pid_t pid) {
  absl::StatusOr<std::vector<attach::Mapping>> maps = attach::ReadMaps(pid);
  return maps.ok() && attach::LoadsCuda(*maps);
}

// The pids a selector names. --match and --cgroup keep only CUDA processes (not the launcher,
// the shell, DataLoader workers), and never this command.
absl::StatusOr<std::vector<pid_t>> Select(const ProcessSelector& which) {
  std::vector<pid_t> out = which.pids;
  std::vector<pid_t> candidates;
  if (!which.cgroup.empty()) {
    std::ifstream procs(std::filesystem::path(which.cgroup) / "cgroup.procs");
    if (!procs) return absl::NotFoundError(absl::StrCat("cannot read ", which.cgroup, "/cgroup.procs"));
    for (pid_t p; procs >> p;) candidates.push_back(p);
  } else if (!which.match.empty()) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
      if (pid_t p; absl::SimpleAtoi(e.path().filename().string(), &p)) candidates.push_back(p);
    }
  }
  std::unique_ptr<re2::RE2> re;
  if (!which.match.empty()) {
    re = std::make_unique<re2::RE2>(which.match, re2::RE2::Quiet);
    if (!re->ok()) return absl::InvalidArgumentError(absl::StrCat("--match: ", re->error()));
  }
  for (pid_t p : candidates) {
    if (p == getpid() || !IsCudaProcess(p)) continue;
    if (re != nullptr) {
      std::string cmdline = ReadWhole(absl::StrCat("/proc/", p, "/cmdline"));
      for (char& c : cmdline) {
        if (c == '\0') c = ' ';
      }
      if (!re2::RE2::PartialMatch(cmdline, *re)) continue;
    }
    out.push_back(p);
  }
  if (out.empty()) return absl::NotFoundError("no running CUDA process matches");
  return out;
}

}  // namespace

int AttachToProcesses(const GlobalOptions& g, AttachOptions a, const ProcessSelector& which) {
  absl::StatusOr<std::vector<pid_t>> pids = Select(which);
  if (!pids.ok()) {
    Fail(std::string(pids.status().message()));
    return 1;
  }
  // gpuspyd first: a process must not be touched for a collector that is not there.
  QueryClient q(g.collector, g.timeout_s);
  v1::ListJobsResponse ignored;
  if (!q.Call(&v1::Query::Stub::ListJobs, v1::ListJobsRequest(), &ignored)) return 1;
  std::vector<Attached> attached;
  for (pid_t pid : *pids) {
    const auto started = std::chrono::steady_clock::now();
    absl::StatusOr<Attached> one = LoadInto(g, a, pid, g.json);
    if (!one.ok()) {
      Fail(std::string(one.status().message()));
      return 1;
    }
    if (absl::Status st = AwaitRegistration(q, *one); !st.ok()) {
      Fail(std::string(st.message()));
      return 1;
    }
    if (!g.json) {
      std::cout << "pid " << pid << ": registered with gpuspyd as job " << one->job << " after "
                << std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::steady_clock::now() - started).count()
                << " ms\n" << std::flush;
    }
    if (!attached.empty() && one->job != attached.front().job) {
      Fail(absl::StrCat("pid ", pid, " is in job ", one->job, ", pid ", attached.front().pid,
                        " in job ", attached.front().job, ": attach them one job at a time (or "
                        "name one with --job)"));
      return 1;
    }
    attached.push_back(*one);
  }
  a.job = attached.front().job;
  for (const Attached& one : attached) a.process_keys.push_back(one.process_key);
  return Attach(g, a);
}

int DetachFromProcess(const GlobalOptions& g, pid_t pid) {
  absl::StatusOr<attach::Target> target = attach::Preflight(pid);
  if (!target.ok()) {
    Fail(std::string(target.status().message()));
    return 1;
  }
  absl::StatusOr<std::string> stub = StubFor(*target);
  absl::StatusOr<SettingsDir> dir = stub.ok() ? SettingsDir::Create(*target) : stub.status();
  if (!dir.ok()) {
    Fail(std::string(dir.status().message()));
    return 1;
  }
  absl::StatusOr<attach::RemoteCallResult> call;
  {
    HoldSignals hold;
    call = attach::CallInProcess(*target, *stub, "gpuspy_detach", dir->settings_in_target(),
                                 attach::LoadPolicy::kOnlyIfLoaded);
  }
  if (!call.ok()) {
    Fail(std::string(call.status().message()));
    return 1;
  }
  absl::StatusOr<std::vector<std::string>> result = dir->AwaitResult(pid, kSessionStartTimeout);
  if (!result.ok()) {
    Fail(std::string(result.status().message()));
    return 1;
  }
  if (result->empty() || (*result)[0] != "detached") {
    Fail(absl::StrCat("pid ", pid, ": ", result->size() > 1 ? (*result)[1] : "detach failed"));
    return 1;
  }
  if (g.json) {
    std::cout << "{\"pid\": " << pid << ", \"detached\": true, \"events\": "
              << (result->size() > 1 ? (*result)[1] : "0") << "}\n";
  } else {
    std::cout << "pid " << pid << ": detached (" << (result->size() > 1 ? (*result)[1] : "0")
              << " events sent this session); gpuspy stays loaded and inert, `gpuspy attach --pid "
              << pid << "` starts it again\n";
  }
  return 0;
}

}  // namespace gpuspy::cli
