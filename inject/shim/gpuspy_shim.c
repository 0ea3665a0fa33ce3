/* libgpuspy.so: the LD_PRELOAD shim.
 *
 * It runs in every process the profiled command spawns (shells, compilers, nvidia-smi, DataLoader
 * workers), so it does the least possible: libc only, no threads, no allocation beyond setenv,
 * no other library loaded. It arms CUDA's own injection hook; the CUDA driver then loads the
 * injection stub only into processes that really initialize CUDA.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STUB_NAME "libgpuspy_inject.so"

static int env_true(const char* name) {
  const char* v = getenv(name);
  return v != NULL && *v != '\0' && strcmp(v, "0") != 0 && strcmp(v, "false") != 0;
}

/* The stub lives next to this library (GPUSPY_INJECT_PATH overrides, for tests and packaging). */
static int stub_path(char* out, size_t size) {
  const char* override_path = getenv("GPUSPY_INJECT_PATH");
  if (override_path != NULL && *override_path != '\0') {
    return snprintf(out, size, "%s", override_path) < (int)size;
  }
  Dl_info info;
  if (dladdr((void*)&stub_path, &info) == 0 || info.dli_fname == NULL) return 0;
  const char* slash = strrchr(info.dli_fname, '/');
  if (slash == NULL) return snprintf(out, size, "%s", STUB_NAME) < (int)size;
  return snprintf(out, size, "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname,
                  STUB_NAME) < (int)size;
}

__attribute__((constructor)) static void gpuspy_shim_init(void) {
  if (env_true("GPUSPY_DISABLE")) return;
  char path[PATH_MAX];
  if (!stub_path(path, sizeof(path))) return;
  /* Never override a tool the user chose (nsys, another injector): they win, we stay out. */
  const char* cuda = getenv("CUDA_INJECTION64_PATH");
  if (cuda == NULL || *cuda == '\0') setenv("CUDA_INJECTION64_PATH", path, 1);
  const char* nvtx = getenv("NVTX_INJECTION64_PATH");
  if (nvtx == NULL || *nvtx == '\0') setenv("NVTX_INJECTION64_PATH", path, 1);
}
