/* A process for gpuspy's attach tests to borrow a thread of: it knows nothing about gpuspy, says
 * "ready" on stdout, does one kind of work, and checks that the work came out exactly as it would
 * have without anyone stopping it. Exit 0 and "ok ..." when it did; anything else is a bug.
 *
 *   attach_target spin MS        registers: a chain of multiplications whose result is known
 *   attach_target read           a read(2) of stdin that must neither fail with EINTR nor lose data
 *   attach_target sleep MS       a nanosleep that must last its full time
 *   attach_target threads N MS   N threads spinning beside the main thread
 *   attach_target exit-soon MS   exits on its own after MS (attach races it)
 *   attach_target vector N       holds a pattern in xmm0-xmm15 for N rounds of checking it (no calls
 *                                in between): a borrowed thread whose vector registers were not put
 *                                back fails
 *   attach_target gaps MS        reads the clock in a tight loop and prints the longest gap
 *                                between two reads: the stop as the target sees it (bench/attach.sh)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Kept in registers by the compiler: a borrowed thread whose registers were not put back exactly
 * gets a different chain. */
static uint64_t chain(uint64_t x, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull + (x >> 29);
  return x;
}

static int spin(int64_t ms) {
  const uint64_t kRounds = 1000000;
  uint64_t rounds = 0, x = 42, y = 42;
  const int64_t end = now_ms() + ms;
  while (now_ms() < end) {
    x = chain(x, kRounds);
    ++rounds;
  }
  for (uint64_t i = 0; i < rounds; ++i) y = chain(y, kRounds);
  if (x != y) {
    printf("bad chain after %llu rounds\n", (unsigned long long)rounds);
    return 1;
  }
  printf("ok spin\n");
  return 0;
}

#if defined(__x86_64__)
/* One asm block, so the compiler can keep nothing of its own in the vector registers. */
static int vector_hold(uint64_t rounds) {
  uint64_t bad = 0;
  __asm__ volatile(
      "movabs $0x0123456789abcdef, %%rax\n"
      "movq %%rax, %%xmm0\n  movq %%rax, %%xmm1\n  movq %%rax, %%xmm2\n  movq %%rax, %%xmm3\n"
      "movq %%rax, %%xmm4\n  movq %%rax, %%xmm5\n  movq %%rax, %%xmm6\n  movq %%rax, %%xmm7\n"
      "movq %%rax, %%xmm8\n  movq %%rax, %%xmm9\n  movq %%rax, %%xmm10\n movq %%rax, %%xmm11\n"
      "movq %%rax, %%xmm12\n movq %%rax, %%xmm13\n movq %%rax, %%xmm14\n movq %%rax, %%xmm15\n"
      "1:\n"
      "movq %%xmm0, %%rdx\n  cmp %%rax, %%rdx\n jne 2f\n"
      "movq %%xmm1, %%rdx\n  cmp %%rax, %%rdx\n jne 2f\n"
      "movq %%xmm2, %%rdx\n  cmp %%rax, %%rdx\n jne 2f\n"
      "movq %%xmm3, %%rdx\n  cmp %%rax, %%rdx\n jne 2f\n"
      "movq %%xmm4, %%rdx\n  cmp %%rax, %%rdx\n jne 2f\n"
      "movq %%xmm5, %%rdx\n  cmp %%rax, %%rdx\n jne 2f\n"
      "movq %%xmm6, %%rdx\n  cmp %%rax, %%rdx\n jne 2f\n"
      "movq %%xmm7, %%rdx\n  cmp %%rax, %%rdx\n jne 2f\n"
      "movq %%xmm8, %%rdx\n  cmp %%rax, %%rdx\n jne 2f\n"
      "movq %%xmm15, %%rdx\n cmp %%rax, %%rdx\n jne 2f\n"
      "dec %[n]\n jnz 1b\n jmp 3f\n"
      "2: mov $1, %[bad]\n"
      "3:\n"
      : [bad] "+r"(bad), [n] "+r"(rounds)
      :
      : "rax", "rdx", "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
        "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
  return bad != 0;
}
#endif

static atomic_int g_stop = 0;  /* atomic: read by the spinners, set by main */
static void* spinner(void* arg) {
  uint64_t x = (uint64_t)(uintptr_t)arg;
  while (!atomic_load_explicit(&g_stop, memory_order_relaxed)) x = chain(x, 1000);
  return (void*)(uintptr_t)(x | 1);
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IONBF, 0);
  if (argc < 2) return 2;
  const char* mode = argv[1];
  const int64_t arg = argc > 2 ? atoll(argv[2]) : 0;
  printf("ready\n");
  if (strcmp(mode, "spin") == 0) return spin(arg);
  if (strcmp(mode, "read") == 0) {
    char buf[128];
    ssize_t n = read(0, buf, sizeof(buf) - 1);
    if (n < 0) {
      printf("read failed: %s\n", strerror(errno));
      return 1;
    }
    buf[n] = '\0';
    printf("ok read %s", buf);
    return 0;
  }
  if (strcmp(mode, "sleep") == 0) {
    const int64_t start = now_ms();
    struct timespec ts = {arg / 1000, (arg % 1000) * 1000000};
    if (nanosleep(&ts, NULL) != 0) {
      printf("nanosleep failed: %s\n", strerror(errno));
      return 1;
    }
    const int64_t slept = now_ms() - start;
    if (slept + 5 < arg) {
      printf("slept only %lld of %lld ms\n", (long long)slept, (long long)arg);
      return 1;
    }
    printf("ok sleep\n");
    return 0;
  }
  if (strcmp(mode, "threads") == 0) {
    const int n = (int)arg;
    pthread_t* t = calloc((size_t)n, sizeof(pthread_t));
    for (int i = 0; i < n; ++i) pthread_create(&t[i], NULL, spinner, (void*)(uintptr_t)(i + 1));
    const int rc = spin(argc > 3 ? atoll(argv[3]) : 1000);
    atomic_store(&g_stop, 1);
    for (int i = 0; i < n; ++i) pthread_join(t[i], NULL);
    free(t);
    return rc;
  }
#if defined(__x86_64__)
  if (strcmp(mode, "vector") == 0) {
    if (vector_hold((uint64_t)arg)) {
      printf("vector registers changed\n");
      return 1;
    }
    printf("ok vector\n");
    return 0;
  }
#endif
  if (strcmp(mode, "gaps") == 0) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    const int64_t end = now_ms() + arg;
    int64_t max_gap_ns = 0;
    while (now_ms() < end) {
      clock_gettime(CLOCK_MONOTONIC, &b);
      const int64_t gap = (int64_t)(b.tv_sec - a.tv_sec) * 1000000000 + (b.tv_nsec - a.tv_nsec);
      if (gap > max_gap_ns) max_gap_ns = gap;
      a = b;
    }
    printf("ok max_gap_us %lld\n", (long long)(max_gap_ns / 1000));
    return 0;
  }
  if (strcmp(mode, "exit-soon") == 0) {
    usleep((useconds_t)(arg * 1000));
    printf("ok exit\n");
    return 0;
  }
  return 2;
}
