// One thread of another process, stopped under ptrace so that functions can be called inside it
// (dlopen of gpuspy's stub), then put back exactly as it was: registers, and every byte written.
//
// Why ptrace directly and not gdb in batch mode (memray's way): gdb is not on every node or in
// every container, it stops every thread of the target (the pause users see), and its failure
// modes come back as text to parse. Stopping one thread with PTRACE_SEIZE + PTRACE_INTERRUPT
// leaves the target's other threads running, needs only CAP_SYS_PTRACE or the same uid, and every
// error is an errno we can explain.
//
// x86-64 only (the calling convention and the register set are the architecture's); elsewhere
// Seize says so.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gpuspy::attach {

class TracedThread {
 public:
  // `unsafe(ip)`: whether the thread must not be borrowed with its instruction pointer at `ip`
  // outside a system call (inside libc or the dynamic loader it may hold malloc's or the
  // loader's lock, and dlopen would deadlock on it). Such a stop is let go and retried.
  using UnsafeAt = std::function<bool(uint64_t ip)>;

  // Seizes `tid` of process `pid`, interrupts it at a point where borrowing it is safe (at most
  // `settle` of retries), and saves its registers. The error says why not in words a user can
  // act on (ptrace not permitted, another tracer, the process exited, ...).
  static absl::StatusOr<std::unique_ptr<TracedThread>> Seize(pid_t pid, pid_t tid,
                                                             const UnsafeAt& unsafe,
                                                             std::chrono::milliseconds settle);
  ~TracedThread();  // restores and detaches if Release was not called
  TracedThread(const TracedThread&) = delete;
  TracedThread& operator=(const TracedThread&) = delete;

  // Copies `bytes` into the scratch area below the thread's stack (saved first, restored by
  // Release) and returns their address there.
  absl::StatusOr<uint64_t> Push(const std::string& bytes);
  // Calls the function at `address` with up to six integer/pointer arguments, on the thread's
  // own stack below the scratch area, and returns its result register. Signals that arrive for
  // the thread meanwhile are held back and delivered after Release. Waits as long as the call
  // takes: a thread let go in the middle of the call would return to nowhere and crash the target.
  absl::StatusOr<uint64_t> Call(uint64_t address, const std::vector<uint64_t>& args);
  // The NUL-terminated string at `address` in the target (at most `max` bytes of it).
  absl::StatusOr<std::string> ReadString(uint64_t address, size_t max);
  // Puts back every byte written and the saved registers, and lets the thread go. Idempotent.
  absl::Status Release();

  // How long the thread has been stopped (from the stop we kept until now or Release).
  std::chrono::nanoseconds stopped_for() const;
  uint64_t stopped_ip() const { return stopped_ip_; }
  bool was_in_syscall() const { return in_syscall_; }

 private:
  TracedThread(pid_t pid, pid_t tid) : pid_(pid), tid_(tid) {}
  absl::Status Write(uint64_t address, const void* data, size_t size);
  absl::Status SaveExtendedState();
  absl::Status RestoreExtendedState();
  absl::Status Read(uint64_t address, void* data, size_t size);

  pid_t pid_, tid_;
  int mem_fd_ = -1;
  bool attached_ = false;
  bool released_ = false;
  bool in_syscall_ = false;
  uint64_t stopped_ip_ = 0;
  std::vector<uint8_t> saved_regs_;     // struct user_regs_struct, opaque here
  // The extended register state (x87, SSE, AVX, AVX-512: XSAVE layout, or the FXSAVE area where
  // the kernel offers no XSTATE regset). The borrowed thread may hold live values in vector
  // registers (a struct copy through xmm0), and dlopen's memcpy and strlen clobber them.
  std::vector<uint8_t> saved_xstate_;
  bool xstate_is_fxsave_ = false;
  uint64_t scratch_top_ = 0;            // below the red zone
  uint64_t scratch_used_ = 0;
  std::vector<uint8_t> saved_scratch_;  // what was in the scratch area (and the call slot)
  uint64_t saved_from_ = 0;
  std::vector<int> held_signals_;
  std::chrono::steady_clock::time_point stopped_at_{};
  std::chrono::steady_clock::time_point released_at_{};
};

}  // namespace gpuspy::attach
