// Whether `gpuspy attach --pid N` may and can borrow a thread of process N, checked before
// touching it: every refusal says why and what to do (the "refuse and explain").
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "client/attach/proc_maps.h"

namespace gpuspy::attach {

// The fields of /proc/N/status the checks need.
struct ProcStatus {
  std::string name;
  char state = '?';      // R, S, D, T, t, Z, X
  uid_t real_uid = 0, effective_uid = 0;
  pid_t tracer_pid = 0;
  int threads = 0;
};
ProcStatus ParseProcStatus(std::string_view text);

struct Target {
  pid_t pid = 0;
  ProcStatus status;
  std::vector<Mapping> maps;
  LoadedObject libc;
  std::string cuda_library;  // the library that shows this is a CUDA process
};

// What the checks read from the system, separable for tests.
struct Host {
  uid_t euid = 0;
  bool cap_sys_ptrace = false;
  int ptrace_scope = -1;  // /proc/sys/kernel/yama/ptrace_scope; -1 without Yama
  static Host Current();
};

// Whether a process with these mappings loaded CUDA (libcuda, libcudart or libcupti).
bool LoadsCuda(const std::vector<Mapping>& maps);

// The checks, on what was read: the target's status and map, and this host.
absl::Status CheckAttachable(pid_t pid, const ProcStatus& status, const std::vector<Mapping>& maps,
                             const Host& host);
// Reads /proc/N and checks. The architecture is checked from /proc/N/exe (x86-64 only).
absl::StatusOr<Target> Preflight(pid_t pid);

// The name of process `pid` as another uid's own ptrace check would see it: "/proc/N/root" + path,
// so that a target in another mount namespace (a container) has its own files read.
std::string TargetPath(pid_t pid, const std::string& path);

}  // namespace gpuspy::attach
