/* libgpuspy_inject.so: what CUDA_INJECTION64_PATH / NVTX_INJECTION64_PATH name.
 *
 * The CUDA driver dlopens this with flags we do not control (possibly RTLD_GLOBAL), so it is
 * plain C with libc only: nothing it brings can collide with the application's libraries. It
 * decides whether loading the core is safe, then loads it RTLD_LOCAL and hands over.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inject/stub/core_entry.h"

#define CORE_NAME "libgpuspy_core.so"

static int env_true(const char* name) {
  const char* v = getenv(name);
  return v != NULL && *v != '\0' && strcmp(v, "0") != 0 && strcmp(v, "false") != 0;
}

/* The last "degraded" reason, for the result of `gpuspy attach --pid` (which cannot read our
 * stderr). */
static char g_last_problem[512];

static void log_line(const char* fmt, const char* arg) {
  snprintf(g_last_problem, sizeof(g_last_problem), fmt, arg);
  if (env_true("GPUSPY_QUIET")) return;
  char buf[1024];
  int n = snprintf(buf, sizeof(buf), "gpuspy[%d]: ", (int)getpid());
  if (n < 0 || n >= (int)sizeof(buf)) return;
  int m = snprintf(buf + n, sizeof(buf) - n, fmt, arg);
  if (m < 0) return;
  size_t len = strlen(buf);
  if (len + 1 < sizeof(buf)) {
    buf[len++] = '\n';
  }
  (void)!write(2, buf, len);
}

/* Directory of this library, for finding the core beside it. */
static int sibling_path(const char* name, char* out, size_t size) {
  Dl_info info;
  if (dladdr((void*)&sibling_path, &info) == 0 || info.dli_fname == NULL) return 0;
  const char* slash = strrchr(info.dli_fname, '/');
  if (slash == NULL) return snprintf(out, size, "%s", name) < (int)size;
  return snprintf(out, size, "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname, name) <
         (int)size;
}

/* Symbols whose presence in the global scope means the application exported its own protobuf,
 * abseil or gRPC: our core's copies would bind to them (RTLD_LOCAL still resolves undefined
 * symbols globally first). Mangled names of long-stable entry points of each library. */
static const char* const kForeignSymbols[] = {
    "_ZN6google8protobuf7Message8CopyFromERKS1_",          /* protobuf Message::CopyFrom */
    "_ZN6google8protobuf11MessageLite15ParseFromStringERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE",
    "grpc_init",                                           /* gRPC core C API */
    "_ZN4absl12lts_2023080213base_internal13SpinLockDelayEPVSt6atomicIjEjiNS2_14SchedulingModeE",
    NULL,
};

static const char* global_conflict(void) {
  if (env_true("GPUSPY_IGNORE_CONFLICTS")) return NULL;
  for (const char* const* s = kForeignSymbols; *s != NULL; ++s) {
    if (dlsym(RTLD_DEFAULT, *s) != NULL) return *s;
  }
  return NULL;
}

/* CUPTI ships in different places: the CUDA toolkit, pip wheels (nvidia/cuda_cupti/lib), conda.
 * Look next to the CUDA runtime the process already loaded, then in the toolkit. */
struct cupti_search {
  char found[PATH_MAX];
};

static int try_path(const char* path) { return access(path, R_OK) == 0; }

static int phdr_visit(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  struct cupti_search* s = (struct cupti_search*)data;
  const char* name = info->dlpi_name;
  if (name == NULL || strstr(name, "libcudart.so") == NULL) return 0;
  const char* slash = strrchr(name, '/');
  if (slash == NULL) return 0;
  int dir_len = (int)(slash - name);
  char candidate[PATH_MAX];
  /* pip wheels: .../nvidia/cuda_runtime/lib/libcudart.so.13 -> .../nvidia/cuda_cupti/lib */
  const char* rt = strstr(name, "/cuda_runtime/lib");
  if (rt != NULL) {
    snprintf(candidate, sizeof(candidate), "%.*s/cuda_cupti/lib/libcupti.so.13", (int)(rt - name),
             name);
    if (try_path(candidate)) {
      snprintf(s->found, sizeof(s->found), "%s", candidate);
      return 1;
    }
  }
  /* toolkit layout: lib64/libcudart.so -> lib64/libcupti.so.13 or extras/CUPTI/lib64 */
  snprintf(candidate, sizeof(candidate), "%.*s/libcupti.so.13", dir_len, name);
  if (try_path(candidate)) {
    snprintf(s->found, sizeof(s->found), "%s", candidate);
    return 1;
  }
  snprintf(candidate, sizeof(candidate), "%.*s/../extras/CUPTI/lib64/libcupti.so.13", dir_len,
           name);
  if (try_path(candidate)) {
    snprintf(s->found, sizeof(s->found), "%s", candidate);
    return 1;
  }
  return 0;
}

/* A CUPTI the process already loaded (PyTorch's Kineto links one): a second copy from elsewhere
 * would be a second CUPTI in one process. */
static int loaded_cupti_visit(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  struct cupti_search* s = (struct cupti_search*)data;
  const char* name = info->dlpi_name;
  const char* slash = name != NULL ? strrchr(name, '/') : NULL;
  if (slash == NULL || strncmp(slash + 1, "libcupti.so", 11) != 0) return 0;
  snprintf(s->found, sizeof(s->found), "%s", name);
  return 1;
}

static const char* find_cupti(char* out, size_t size) {
  const char* env = getenv("GPUSPY_CUPTI_PATH");
  if (env != NULL && *env != '\0') {
    snprintf(out, size, "%s", env);
    return out;
  }
  struct cupti_search s;
  s.found[0] = '\0';
  dl_iterate_phdr(loaded_cupti_visit, &s);
  if (s.found[0] == '\0') dl_iterate_phdr(phdr_visit, &s);
  if (s.found[0] != '\0') {
    snprintf(out, size, "%s", s.found);
    return out;
  }
  static const char* const kToolkit[] = {"/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
                                         "/usr/local/cuda/lib64/libcupti.so.13", NULL};
  for (const char* const* p = kToolkit; *p != NULL; ++p) {
    if (try_path(*p)) {
      snprintf(out, size, "%s", *p);
      return out;
    }
  }
  /* Last resort: the loader's own search (LD_LIBRARY_PATH, ld.so.cache). */
  snprintf(out, size, "%s", "libcupti.so.13");
  return out;
}

static gpuspy_core_entry_fn load_core(void) {
  static gpuspy_core_entry_fn entry = NULL;
  static int tried = 0;
  if (tried) return entry;
  tried = 1;
  const char* conflict = global_conflict();
  if (conflict != NULL) {
    log_line("degraded: the application exports %s globally; not loading the gRPC-based core "
             "to keep its libraries and ours apart (set GPUSPY_IGNORE_CONFLICTS=1 to force)",
             conflict);
    return NULL;
  }
  char path[PATH_MAX];
  const char* override_path = getenv("GPUSPY_CORE_PATH");
  if (override_path != NULL && *override_path != '\0') {
    snprintf(path, sizeof(path), "%s", override_path);
  } else if (!sibling_path(CORE_NAME, path, sizeof(path))) {
    log_line("degraded: cannot locate %s", CORE_NAME);
    return NULL;
  }
  void* core = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (core == NULL) {
    log_line("degraded: cannot load the core: %s", dlerror());
    return NULL;
  }
  entry = (gpuspy_core_entry_fn)dlsym(core, GPUSPY_CORE_ENTRY);
  if (entry == NULL) log_line("degraded: %s lacks its entry point", path);
  return entry;
}

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

/* The result file of `gpuspy attach --pid` (inject/core/attach_config.h), for what fails before
 * the core runs. */
static void write_attach_result(const char* config_path, const char* status, const char* message) {
  char path[PATH_MAX], tmp[PATH_MAX];
  if (snprintf(path, sizeof(path), "%s.result", config_path) >= (int)sizeof(path)) return;
  if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) return;
  FILE* f = fopen(tmp, "w");
  if (f == NULL) return;
  fprintf(f, "%s\t%s\n", status, message);
  if (fclose(f) == 0) rename(tmp, path);
}

/* Called by the CUDA driver when the process initializes CUDA. */
/* `gpuspy run` names a file here so that it can tell, once the command has exited, whether any
 * of its processes initialised CUDA at all (the driver loads this library only then): a command
 * that never did is told so, rather than pointed at a report that will not exist. One open() at
 * CUDA initialisation, never on a hot path. */
static void mark_cuda_initialised(void) {
  const char* path = getenv("GPUSPY_RUN_CUDA_MARKER");
  if (path == NULL || path[0] == '\0') return;
  int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0) close(fd);
}

__attribute__((visibility("default"))) int InitializeInjection(void) {
  mark_cuda_initialised();
  if (env_true("GPUSPY_DISABLE")) return 1;
  pthread_mutex_lock(&g_mu);
  static int started = 0;
  if (!started) {
    started = 1;
    gpuspy_core_entry_fn entry = load_core();
    if (entry != NULL) {
      char cupti[PATH_MAX];
      struct gpuspy_core_args args;
      memset(&args, 0, sizeof(args));
      args.struct_size = sizeof(args);
      args.cupti_path = find_cupti(cupti, sizeof(cupti));
      args.reason = GPUSPY_START_CUDA_INIT;
      entry(&args);
    }
  }
  pthread_mutex_unlock(&g_mu);
  return 1;
}

/* Called by NVTX on the first NVTX call when NVTX_INJECTION64_PATH names this library. CUPTI
 * implements NVTX capture (MARKER activity records), so hand NVTX to CUPTI's own entry. */
typedef int (*nvtx_init_fn)(void* get_export_table);

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(void* get_export_table) {
  if (env_true("GPUSPY_DISABLE")) return 0;
  char cupti[PATH_MAX];
  void* lib = dlopen(find_cupti(cupti, sizeof(cupti)), RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) return 0;  /* NVTX calls stay no-ops; the app is unaffected */
  nvtx_init_fn init = (nvtx_init_fn)dlsym(lib, "InitializeInjectionNvtx2");
  return init != NULL ? init(get_export_table) : 0;
}

/* gpuspy attach/detach --pid: the attaching CLI stops one thread of the running process with
 * ptrace, dlopens this library, calls one of these, and lets the thread go. They copy the path and
 * return at once: loading the core (gRPC, CUPTI) and delivering happen on a thread of their own, so
 * that the borrowed thread is stopped for microseconds, not for as long as that takes. */
struct control_request {
  char config_path[PATH_MAX];
  int reason;
};

static void* control_thread(void* arg) {
  struct control_request* req = (struct control_request*)arg;
  pthread_mutex_lock(&g_mu);
  gpuspy_core_entry_fn entry = load_core();
  if (entry == NULL) {
    write_attach_result(req->config_path, "error",
                        g_last_problem[0] != '\0' ? g_last_problem : "gpuspy's core did not load");
  } else {
    char cupti[PATH_MAX];
    struct gpuspy_core_args args;
    memset(&args, 0, sizeof(args));
    args.struct_size = sizeof(args);
    args.cupti_path = find_cupti(cupti, sizeof(cupti));
    args.reason = req->reason;
    args.config_path = req->config_path;
    entry(&args);
  }
  pthread_mutex_unlock(&g_mu);
  free(req);
  return NULL;
}

static int start_control(const char* config_path, int reason) {
  if (config_path == NULL) return 1;
  struct control_request* req = (struct control_request*)calloc(1, sizeof(*req));
  if (req == NULL) return 1;
  snprintf(req->config_path, sizeof(req->config_path), "%s", config_path);
  req->reason = reason;
  /* Our threads take none of the application's signals. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_t t;
  const int rc = pthread_create(&t, &attr, control_thread, req);
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) {
    free(req);
    return rc;
  }
  return 0;
}

__attribute__((visibility("default"))) int gpuspy_attach(const char* config_path) {
  return start_control(config_path, GPUSPY_START_ATTACH);
}

__attribute__((visibility("default"))) int gpuspy_detach(const char* config_path) {
  return start_control(config_path, GPUSPY_STOP_DETACH);
}
