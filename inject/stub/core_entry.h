/* The one function the stub calls in the core, and its argument. C, shared by both sides. */
#ifndef GPUSPY_INJECT_STUB_CORE_ENTRY_H_
#define GPUSPY_INJECT_STUB_CORE_ENTRY_H_

#ifdef __cplusplus
extern "C" {
#endif

#define GPUSPY_CORE_ENTRY "gpuspy_core_start"

enum gpuspy_start_reason {
  GPUSPY_START_CUDA_INIT = 1, /* InitializeInjection from the CUDA driver */
  GPUSPY_START_ATTACH = 2,    /* gpuspy attach --pid: a running process, settings in config_path */
  GPUSPY_STOP_DETACH = 3,     /* gpuspy detach --pid: stop the session, result beside config_path */
};

struct gpuspy_core_args {
  unsigned struct_size;   /* sizeof(struct gpuspy_core_args) of the caller */
  const char* cupti_path; /* where the stub found libcupti */
  int reason;
  const char* config_path; /* ATTACH/DETACH: the settings file (inject/core/attach_config.h) */
};

/* Returns 0 when capture started, non-zero when the core stays inert (it logged why). */
typedef int (*gpuspy_core_entry_fn)(const struct gpuspy_core_args* args);

#ifdef __cplusplus
}
#endif

#endif
