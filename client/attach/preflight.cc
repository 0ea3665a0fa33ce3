#include "client/attach/preflight.h"

#include <elf.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "client/attach/elf_symbols.h"

namespace gpuspy::attach {
namespace {

constexpr int kCapSysPtrace = 19;  // linux/capability.h

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Libraries whose presence shows CUDA in the process: the driver API, the runtime, or CUPTI (the
// test suite's fake CUDA is a CUPTI).
constexpr std::string_view kCudaLibraries[] = {"libcuda.so", "libcudart.so", "libcupti.so"};

}  // namespace

bool LoadsCuda(const std::vector<Mapping>& maps) {
  for (const Mapping& m : maps) {
    const size_t slash = m.path.rfind('/');
    if (slash == std::string::npos) continue;
    const std::string_view base = std::string_view(m.path).substr(slash + 1);
    for (std::string_view lib : kCudaLibraries) {
      if (base.substr(0, lib.size()) == lib) return true;
    }
  }
  return false;
}

ProcStatus ParseProcStatus(std::string_view text) {
  ProcStatus s;
  for (absl::string_view line : absl::StrSplit(absl::string_view(text.data(), text.size()), '\n')) {
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    const absl::string_view key = line.substr(0, colon);
    const absl::string_view value = absl::StripAsciiWhitespace(line.substr(colon + 1));
    if (key == "Name") {
      s.name = std::string(value);
    } else if (key == "State" && !value.empty()) {
      s.state = value[0];
    } else if (key == "Uid") {
      std::vector<absl::string_view> ids = absl::StrSplit(value, '\t', absl::SkipEmpty());
      if (ids.size() >= 2) {
        (void)absl::SimpleAtoi(ids[0], &s.real_uid);
        (void)absl::SimpleAtoi(ids[1], &s.effective_uid);
      }
    } else if (key == "TracerPid") {
      (void)absl::SimpleAtoi(value, &s.tracer_pid);
    } else if (key == "Threads") {
      (void)absl::SimpleAtoi(value, &s.threads);
    }
  }
  return s;
}

Host Host::Current() {
  Host h;
  h.euid = geteuid();
  for (absl::string_view line : absl::StrSplit(ReadWhole("/proc/self/status"), '\n')) {
    if (!absl::ConsumePrefix(&line, "CapEff:")) continue;
    uint64_t caps = 0;
    if (absl::SimpleHexAtoi(absl::StripAsciiWhitespace(line), &caps)) {
      h.cap_sys_ptrace = (caps >> kCapSysPtrace) & 1;
    }
  }
  std::string scope = ReadWhole("/proc/sys/kernel/yama/ptrace_scope");
  if (int v = 0; absl::SimpleAtoi(absl::StripAsciiWhitespace(scope), &v)) h.ptrace_scope = v;
  return h;
}

std::string TargetPath(pid_t pid, const std::string& path) {
  return absl::StrCat("/proc/", pid, "/root", path);
}

absl::Status CheckAttachable(pid_t pid, const ProcStatus& status, const std::vector<Mapping>& maps,
                             const Host& host) {
  const std::string who = absl::StrCat("pid ", pid, " (", status.name, ")");
  if (pid == getpid()) return absl::InvalidArgumentError("gpuspy cannot attach to itself");
  if (status.state == 'Z' || status.state == 'X') {
    return absl::NotFoundError(absl::StrCat(who, " has exited"));
  }
  if (status.state == 'T' || status.state == 't') {
    return absl::FailedPreconditionError(absl::StrCat(
        who, " is stopped (SIGSTOP or a debugger): continue it (kill -CONT ", pid, ") first"));
  }
  if (host.euid != 0 && host.euid != status.real_uid) {
    return absl::PermissionDeniedError(absl::StrCat(who, " belongs to uid ", status.real_uid,
                                                    "; only its owner or root may attach"));
  }
  if (host.euid != 0 && status.effective_uid != status.real_uid) {
    return absl::PermissionDeniedError(
        absl::StrCat(who, " runs setuid (effective uid ", status.effective_uid, "): only root may attach"));
  }
  if (status.tracer_pid != 0) {
    std::string tracer(absl::StripAsciiWhitespace(ReadWhole(absl::StrCat("/proc/", status.tracer_pid, "/comm"))));
    return absl::FailedPreconditionError(absl::StrCat(
        who, " is already traced by pid ", status.tracer_pid, tracer.empty() ? "" : " (" + tracer + ")",
        ", a debugger or another profiler: detach it first"));
  }
  if (host.ptrace_scope == 3) {
    return absl::PermissionDeniedError(
        "ptrace is disabled on this host (/proc/sys/kernel/yama/ptrace_scope is 3, until reboot)");
  }
  if (host.ptrace_scope >= 1 && !host.cap_sys_ptrace) {
    return absl::PermissionDeniedError(absl::StrCat(
        "/proc/sys/kernel/yama/ptrace_scope is ", host.ptrace_scope,
        ": attaching to a process that is not this one's child needs CAP_SYS_PTRACE (run as root, "
        "or `sudo sysctl kernel.yama.ptrace_scope=0`)"));
  }
  if (!LoadsCuda(maps)) {
    return absl::FailedPreconditionError(absl::StrCat(
        who, " has not loaded CUDA (no libcuda, libcudart or libcupti in /proc/", pid,
        "/maps): nothing to profile. DataLoader workers and launchers are not the training "
        "process: attach to the one that uses the GPU"));
  }
  if (!FindObject(maps, "libc.so.6").has_value() && !FindObject(maps, "libc-").has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat(who, " has no glibc loaded (static or musl): gpuspy cannot load into it"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Target> Preflight(pid_t pid) {
  if (pid <= 0) return absl::InvalidArgumentError(absl::StrCat("--pid ", pid, " is not a process id"));
  const std::string status_text = ReadWhole(absl::StrCat("/proc/", pid, "/status"));
  if (status_text.empty()) return absl::NotFoundError(absl::StrCat("no process with pid ", pid));
  Target t;
  t.pid = pid;
  t.status = ParseProcStatus(status_text);
  // A zombie has no memory map either: it has exited, and saying "not dumpable" sent people
  // looking for a prctl call.
  if (t.status.state == 'Z' || t.status.state == 'X') {
    return absl::NotFoundError(absl::StrCat("pid ", pid, " (", t.status.name,
                                            ") has exited (a zombie its parent has not reaped): "
                                            "nothing to attach to"));
  }
  absl::StatusOr<std::vector<Mapping>> maps = ReadMaps(pid);
  if (!maps.ok() && maps.status().code() != absl::StatusCode::kPermissionDenied) return maps.status();
  if (!maps.ok() || maps->empty()) {
    const Host host = Host::Current();
    if (host.euid != 0 && host.euid != t.status.real_uid) {
      return CheckAttachable(pid, t.status, {}, host);  // says whose process it is
    }
    return absl::PermissionDeniedError(absl::StrCat(
        "pid ", pid, " (", t.status.name, ") is not dumpable (prctl PR_SET_DUMPABLE 0, or it "
        "changed its uid): the kernel lets no other process trace it, so gpuspy cannot attach. "
        "Start it with `gpuspy run` instead"));
  }
  t.maps = *std::move(maps);
  if (absl::Status st = CheckAttachable(pid, t.status, t.maps, Host::Current()); !st.ok()) return st;
  absl::StatusOr<ElfInfo> exe = ReadElfInfo(absl::StrCat("/proc/", pid, "/exe"));
  if (exe.ok() && exe->machine != EM_X86_64) {
    return absl::UnimplementedError(absl::StrCat(
        "pid ", pid, " is not an x86-64 program (ELF machine ", exe->machine,
        "): gpuspy attach --pid supports x86-64 only; start it with `gpuspy run` instead"));
  }
  std::optional<LoadedObject> libc = FindObject(t.maps, "libc.so.6");
  if (!libc.has_value()) libc = FindObject(t.maps, "libc-");
  t.libc = *libc;
  return t;
}

}  // namespace gpuspy::attach
