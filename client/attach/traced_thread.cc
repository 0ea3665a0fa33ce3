#include "client/attach/traced_thread.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <elf.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"

namespace gpuspy::attach {
namespace {

// The x86-64 SysV ABI lets leaf functions use 128 bytes below the stack pointer: never touch them.
constexpr uint64_t kRedZoneBytes = 128;
// Room for the strings handed to the calls (paths), plus the call's return-address slot.
constexpr uint64_t kScratchBytes = 4096;
constexpr uint64_t kCallSlotBytes = 64;
// Between two tries at a safe stop: long enough for a malloc or a lazy binding to finish.
constexpr auto kRetryPause = std::chrono::milliseconds(2);
// Room for the XSAVE area of any x86-64 CPU (AVX-512 with AMX tiles needs ~11 KiB).
constexpr size_t kMaxXstateBytes = 16384;

std::string Errno(const char* what, int err) { return absl::StrCat(what, ": ", std::strerror(err)); }

absl::Status SeizeError(pid_t pid, int err) {
  if (err == ESRCH) return absl::NotFoundError(absl::StrCat("pid ", pid, " exited"));
  if (err == EPERM) {
    return absl::PermissionDeniedError(absl::StrCat(
        "ptrace(PTRACE_SEIZE) of pid ", pid, " is not permitted: the process is not dumpable "
        "(prctl PR_SET_DUMPABLE 0, or a setuid program), another tracer holds it, or this user "
        "lacks CAP_SYS_PTRACE where /proc/sys/kernel/yama/ptrace_scope or the container "
        "requires it (docker: --cap-add SYS_PTRACE)"));
  }
  return absl::InternalError(Errno("ptrace(PTRACE_SEIZE)", err));
}

}  // namespace

#if defined(__x86_64__)

absl::StatusOr<std::unique_ptr<TracedThread>> TracedThread::Seize(pid_t pid, pid_t tid,
                                                                   const UnsafeAt& unsafe,
                                                                   std::chrono::milliseconds settle) {
  std::unique_ptr<TracedThread> t(new TracedThread(pid, tid));
  if (ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) != 0) return SeizeError(pid, errno);
  t->attached_ = true;
  t->mem_fd_ = open(absl::StrCat("/proc/", pid, "/mem").c_str(), O_RDWR | O_CLOEXEC);
  if (t->mem_fd_ < 0) {
    return absl::PermissionDeniedError(Errno(absl::StrCat("open /proc/", pid, "/mem").c_str(), errno));
  }
  const auto give_up = std::chrono::steady_clock::now() + settle;
  user_regs_struct regs{};
  for (int tries = 1;; ++tries) {
    if (ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) != 0) return SeizeError(pid, errno);
    int status = 0;
    if (waitpid(tid, &status, __WALL) != tid) return absl::InternalError(Errno("waitpid", errno));
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      t->attached_ = false;
      return absl::NotFoundError(absl::StrCat("pid ", pid, " exited during attach"));
    }
    if (!WIFSTOPPED(status)) continue;
    if ((status >> 16) != PTRACE_EVENT_STOP) {
      // A signal was on its way to the thread: hold it back, deliver it after Release.
      t->held_signals_.push_back(WSTOPSIG(status));
    }
    if (ptrace(PTRACE_GETREGS, tid, nullptr, &regs) != 0) return absl::InternalError(Errno("PTRACE_GETREGS", errno));
    const bool in_syscall = static_cast<int64_t>(regs.orig_rax) >= 0;
    if (in_syscall || !unsafe || !unsafe(regs.rip)) {
      t->in_syscall_ = in_syscall;
      break;
    }
    if (std::chrono::steady_clock::now() >= give_up) {
      return absl::UnavailableError(absl::StrCat(
          "pid ", pid, " stayed busy inside libc or the dynamic loader for ", settle.count(),
          " ms over ", tries, " tries; calling dlopen there could deadlock it. Try again"));
    }
    if (ptrace(PTRACE_CONT, tid, nullptr, nullptr) != 0) return SeizeError(pid, errno);
    std::this_thread::sleep_for(kRetryPause);
  }
  t->stopped_at_ = std::chrono::steady_clock::now();
  t->stopped_ip_ = regs.rip;
  if (absl::Status st = t->SaveExtendedState(); !st.ok()) return st;
  t->saved_regs_.resize(sizeof(regs));
  std::memcpy(t->saved_regs_.data(), &regs, sizeof(regs));
  t->scratch_top_ = regs.rsp - kRedZoneBytes;
  t->saved_from_ = t->scratch_top_ - kScratchBytes - kCallSlotBytes;
  t->saved_scratch_.resize(t->scratch_top_ - t->saved_from_);
  if (absl::Status st = t->Read(t->saved_from_, t->saved_scratch_.data(), t->saved_scratch_.size());
      !st.ok()) {
    t->saved_scratch_.clear();  // nothing written yet, nothing to put back
    return st;
  }
  return t;
}

absl::Status TracedThread::SaveExtendedState() {
  saved_xstate_.assign(kMaxXstateBytes, 0);
  iovec iov{saved_xstate_.data(), saved_xstate_.size()};
  if (ptrace(PTRACE_GETREGSET, tid_, reinterpret_cast<void*>(NT_X86_XSTATE), &iov) == 0) {
    saved_xstate_.resize(iov.iov_len);  // what this CPU's XSAVE layout uses
    return absl::OkStatus();
  }
  user_fpregs_struct fp{};
  if (ptrace(PTRACE_GETFPREGS, tid_, nullptr, &fp) != 0) {
    saved_xstate_.clear();
    return absl::InternalError(Errno("saving the vector registers (PTRACE_GETFPREGS)", errno));
  }
  saved_xstate_.assign(reinterpret_cast<const uint8_t*>(&fp), reinterpret_cast<const uint8_t*>(&fp) + sizeof(fp));
  xstate_is_fxsave_ = true;
  return absl::OkStatus();
}

absl::Status TracedThread::RestoreExtendedState() {
  if (saved_xstate_.empty()) return absl::OkStatus();
  if (xstate_is_fxsave_) {
    if (ptrace(PTRACE_SETFPREGS, tid_, nullptr, saved_xstate_.data()) == 0) return absl::OkStatus();
  } else {
    iovec iov{saved_xstate_.data(), saved_xstate_.size()};
    if (ptrace(PTRACE_SETREGSET, tid_, reinterpret_cast<void*>(NT_X86_XSTATE), &iov) == 0) {
      return absl::OkStatus();
    }
  }
  return absl::InternalError(Errno("restoring the vector registers", errno));
}

absl::Status TracedThread::Read(uint64_t address, void* data, size_t size) {
  const ssize_t n = pread(mem_fd_, data, size, static_cast<off_t>(address));
  if (n != static_cast<ssize_t>(size)) {
    return absl::InternalError(Errno(absl::StrCat("reading the target's memory at 0x", absl::Hex(address)).c_str(), errno));
  }
  return absl::OkStatus();
}

absl::Status TracedThread::Write(uint64_t address, const void* data, size_t size) {
  const ssize_t n = pwrite(mem_fd_, data, size, static_cast<off_t>(address));
  if (n != static_cast<ssize_t>(size)) {
    return absl::InternalError(Errno(absl::StrCat("writing the target's memory at 0x", absl::Hex(address)).c_str(), errno));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> TracedThread::ReadString(uint64_t address, size_t max) {
  std::string out;
  char chunk[256];
  while (out.size() < max) {
    const ssize_t n = pread(mem_fd_, chunk, sizeof(chunk), static_cast<off_t>(address + out.size()));
    if (n <= 0) break;
    const void* nul = std::memchr(chunk, '\0', static_cast<size_t>(n));
    if (nul != nullptr) return out.append(chunk, static_cast<const char*>(nul) - chunk);
    out.append(chunk, static_cast<size_t>(n));
  }
  if (out.empty()) return absl::InternalError("cannot read the target's string");
  return out.substr(0, max);
}

absl::StatusOr<uint64_t> TracedThread::Push(const std::string& bytes) {
  const uint64_t size = (bytes.size() + 1 + 15) & ~uint64_t{15};
  if (scratch_used_ + size > kScratchBytes) return absl::ResourceExhaustedError("attach scratch area full");
  scratch_used_ += size;
  const uint64_t at = scratch_top_ - scratch_used_;
  std::string with_nul = bytes;
  with_nul.push_back('\0');
  if (absl::Status st = Write(at, with_nul.data(), with_nul.size()); !st.ok()) return st;
  return at;
}

absl::StatusOr<uint64_t> TracedThread::Call(uint64_t address, const std::vector<uint64_t>& args) {
  if (released_ || !attached_) return absl::FailedPreconditionError("thread not held");
  if (args.size() > 6) return absl::InvalidArgumentError("at most six arguments");
  user_regs_struct regs;
  std::memcpy(&regs, saved_regs_.data(), sizeof(regs));
  // The callee's frame starts below the scratch area; at entry the ABI wants rsp + 8 to be a
  // multiple of 16, and [rsp] the return address: 0, so that its `ret` faults and we get the
  // thread back as a SIGSEGV at ip 0.
  const uint64_t ret_slot = ((saved_from_ + 32) & ~uint64_t{15}) - 8;
  const uint64_t zero = 0;
  if (absl::Status st = Write(ret_slot, &zero, sizeof(zero)); !st.ok()) return st;
  unsigned long long* const arg_regs[] = {&regs.rdi, &regs.rsi, &regs.rdx, &regs.rcx, &regs.r8, &regs.r9};
  for (size_t i = 0; i < args.size(); ++i) *arg_regs[i] = args[i];
  regs.rip = address;
  regs.rsp = ret_slot;
  regs.rax = 0;
  // Not in a system call any more: the kernel must not "restart" the interrupted one into our
  // call. The saved registers (with the original orig_rax) bring the restart back on Release.
  regs.orig_rax = static_cast<unsigned long long>(-1);
  if (ptrace(PTRACE_SETREGS, tid_, nullptr, &regs) != 0) return absl::InternalError(Errno("PTRACE_SETREGS", errno));
  int deliver = 0;
  for (;;) {
    if (ptrace(PTRACE_CONT, tid_, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(deliver))) != 0) {
      return absl::InternalError(Errno("PTRACE_CONT", errno));
    }
    deliver = 0;
    int status = 0;
    if (waitpid(tid_, &status, __WALL) != tid_) return absl::InternalError(Errno("waitpid", errno));
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      attached_ = false;
      released_ = true;
      return absl::NotFoundError(absl::StrCat("pid ", pid_, " exited during attach"));
    }
    if (!WIFSTOPPED(status)) continue;
    if ((status >> 16) == PTRACE_EVENT_STOP) continue;  // a late interrupt or a group stop
    const int sig = WSTOPSIG(status);
    user_regs_struct now{};
    if (ptrace(PTRACE_GETREGS, tid_, nullptr, &now) != 0) return absl::InternalError(Errno("PTRACE_GETREGS", errno));
    if (sig == SIGSEGV && now.rip == 0) return static_cast<uint64_t>(now.rax);
    if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGABRT) {
      // The call itself crashed: give the thread its old state back rather than let it die.
      return absl::InternalError(absl::StrCat("the call inside pid ", pid_, " failed with signal ",
                                              sig, " at 0x", absl::Hex(now.rip)));
    }
    held_signals_.push_back(sig);  // the application's own signal: after we are done
  }
}

absl::Status TracedThread::Release() {
  if (released_) return absl::OkStatus();
  released_ = true;
  absl::Status result = absl::OkStatus();
  if (!saved_scratch_.empty()) result = Write(saved_from_, saved_scratch_.data(), saved_scratch_.size());
  if (absl::Status st = RestoreExtendedState(); !st.ok() && result.ok()) result = st;
  if (!saved_regs_.empty() && ptrace(PTRACE_SETREGS, tid_, nullptr, saved_regs_.data()) != 0 && result.ok()) {
    result = absl::InternalError(Errno("restoring the registers (PTRACE_SETREGS)", errno));
  }
  if (ptrace(PTRACE_DETACH, tid_, nullptr, nullptr) != 0 && result.ok() && errno != ESRCH) {
    result = absl::InternalError(Errno("PTRACE_DETACH", errno));
  }
  attached_ = false;
  released_at_ = std::chrono::steady_clock::now();
  for (int sig : held_signals_) (void)syscall(SYS_tgkill, pid_, tid_, sig);
  if (mem_fd_ >= 0) close(mem_fd_);
  mem_fd_ = -1;
  return result;
}

#else  // !__x86_64__

absl::StatusOr<std::unique_ptr<TracedThread>> TracedThread::Seize(pid_t, pid_t, const UnsafeAt&,
                                                                   std::chrono::milliseconds) {
  return absl::UnimplementedError("gpuspy attach --pid supports x86-64 processes only");
}
absl::Status TracedThread::Read(uint64_t, void*, size_t) { return absl::UnimplementedError("x86-64 only"); }
absl::Status TracedThread::Write(uint64_t, const void*, size_t) { return absl::UnimplementedError("x86-64 only"); }
absl::StatusOr<uint64_t> TracedThread::Push(const std::string&) { return absl::UnimplementedError("x86-64 only"); }
absl::StatusOr<std::string> TracedThread::ReadString(uint64_t, size_t) { return absl::UnimplementedError("x86-64 only"); }
absl::StatusOr<uint64_t> TracedThread::Call(uint64_t, const std::vector<uint64_t>&) {
  return absl::UnimplementedError("x86-64 only");
}
absl::Status TracedThread::Release() { return absl::OkStatus(); }
absl::Status TracedThread::SaveExtendedState() { return absl::UnimplementedError("x86-64 only"); }
absl::Status TracedThread::RestoreExtendedState() { return absl::OkStatus(); }

#endif

TracedThread::~TracedThread() {
  if (attached_ && !released_) (void)Release();
  if (mem_fd_ >= 0) close(mem_fd_);
}

std::chrono::nanoseconds TracedThread::stopped_for() const {
  if (stopped_at_ == std::chrono::steady_clock::time_point{}) return std::chrono::nanoseconds(0);
  const auto end = released_ ? released_at_ : std::chrono::steady_clock::now();
  return end - stopped_at_;
}

}  // namespace gpuspy::attach
