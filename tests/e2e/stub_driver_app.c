/* A CUDA application on a machine without a GPU driver, for running gpuspy's injection path
 * against the toolkit's REAL libcupti.
 *
 * The toolkit's stub libcuda cannot start injection: its cuInit returns CUDA_ERROR_STUB_LIBRARY
 * (34) and never loads CUDA_INJECTION64_PATH. So after calling it, this program does what the
 * real driver's cuInit does: dlopen CUDA_INJECTION64_PATH and call its InitializeInjection
 * (--no-stand-in skips that, to show the stub alone loads nothing). Everything from there on
 * (shim -> stub -> core -> libcupti) is gpuspy's production path.
 *
 * Output: cuInit's result, a few deterministic "steps", and the number of threads the process
 * runs at the end (gpuspy must not leave any). It must be identical with and without gpuspy;
 * the exit code is kExitCode either way.
 *
 * Usage: stub_driver_app STUB_LIBCUDA [--no-stand-in] */
#include <dirent.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kExitCode = 3, kSteps = 4, kWorkPerStep = 2000000 };

typedef int (*cu_init_fn)(unsigned flags);
typedef int (*initialize_injection_fn)(void);

static int count_threads(void) {
  DIR* d = opendir("/proc/self/task");
  if (d == NULL) return -1;
  int n = 0;
  for (struct dirent* e = readdir(d); e != NULL; e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

/* What the CUDA driver does with CUDA_INJECTION64_PATH during cuInit. */
static void stand_in_for_the_driver(void) {
  const char* path = getenv("CUDA_INJECTION64_PATH");
  if (path == NULL || *path == '\0') return;
  void* lib = dlopen(path, RTLD_NOW);
  if (lib == NULL) return; /* the driver, too, carries on without the injection */
  initialize_injection_fn init = (initialize_injection_fn)dlsym(lib, "InitializeInjection");
  if (init != NULL) (void)init();
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: stub_driver_app STUB_LIBCUDA [--no-stand-in]\n");
    return 2;
  }
  const int stand_in = !(argc > 2 && strcmp(argv[2], "--no-stand-in") == 0);
  void* cuda = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (cuda == NULL) {
    fprintf(stderr, "stub_driver_app: %s\n", dlerror());
    return 2;
  }
  cu_init_fn cu_init = (cu_init_fn)dlsym(cuda, "cuInit");
  printf("cuInit: %d\n", cu_init != NULL ? cu_init(0) : -1);
  if (stand_in) stand_in_for_the_driver();
  uint64_t x = 88172645463325252ull;
  for (int step = 0; step < kSteps; ++step) {
    for (int i = 0; i < kWorkPerStep; ++i) x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    printf("step %d: %llu\n", step, (unsigned long long)x);
  }
  printf("threads: %d\n", count_threads());
  return kExitCode;
}
