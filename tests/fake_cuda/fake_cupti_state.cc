#include "tests/fake_cuda/fake_cupti_state.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace fake_cupti {
namespace {

// fork() while another thread (e.g. a profiler's flush thread) holds the lock would leave the
// child's copy locked forever: hold it across fork, as CUDA's own fork handlers do for its state.
void LockForFork() { S().mu.lock(); }
void UnlockAfterFork() { S().mu.unlock(); }

}  // namespace

State& S() {
  // Never destroyed: clients may call CUPTI from their exit-time destructors.
  static State* state = [] {
    auto* s = new State();
    pthread_atfork(&LockForFork, &UnlockAfterFork, &UnlockAfterFork);
    return s;
  }();
  return *state;
}

uint64_t Now() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void SleepUntil(uint64_t t) {
  const timespec until{static_cast<time_t>(t / 1'000'000'000ull),
                       static_cast<long>(t % 1'000'000'000ull)};
  while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &until, nullptr) == EINTR) {
  }
}

uint32_t ProcessId() { return static_cast<uint32_t>(getpid()); }

uint32_t ThreadId() {
  if (S().thread_id_type.load() == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) return static_cast<uint32_t>(syscall(SYS_gettid));
  // CUPTI's default: pthread_self(), truncated to the record's 32 bits.
  return static_cast<uint32_t>(pthread_self());
}

CUcontext Context() {
  static int storage;  // only its address matters: an opaque, stable, non-null handle
  return reinterpret_cast<CUcontext>(&storage);
}

const char* Intern(std::string_view s) {
  // Its own lock: interning happens while building records, with or without S().mu held.
  static std::mutex* mu = new std::mutex();
  static std::set<std::string, std::less<>>* names = new std::set<std::string, std::less<>>();
  std::lock_guard lock(*mu);
  auto it = names->find(s);
  if (it == names->end()) it = names->emplace(s).first;
  return it->c_str();  // set nodes never move
}

}  // namespace fake_cupti
