// The calling thread's own CPython frames, read through the C API found with
// dlsym(RTLD_DEFAULT, ...): no Python.h at build time, no libpython dependency. In a process
// without CPython (or with an embedded one loaded RTLD_LOCAL) nothing resolves and every call
// answers "no frame".
//
// Only a thread that holds the GIL is ever walked (Py_IsInitialized && PyGILState_Check && a
// current thread state): the frame API allocates and touches reference counts, which is a data
// race without the GIL, and taking the GIL inside a CUDA call could deadlock against a thread
// that holds it and waits for the driver. CPython 3.9-3.13 (PyThreadState_GetFrame,
// PyFrame_GetCode and PyFrame_GetBack are 3.9+ and return new references).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace gpuspy::inject {

// Opaque CPython objects: a PyCodeObject* / PyFrameObject*.
using PyCode = void*;

struct PythonFrame {
  PyCode code = nullptr;  // borrowed: valid only while the caller keeps the code alive
  int line = 0;
};

class PythonFrames {
 public:
  // Decides, for a code object, whether a frame running it is user code (true) or to be walked
  // past (library internals). Called with the GIL held.
  using IsUserCode = bool (*)(PyCode code, void* context);

  // Resolves the C API once; cheap after the first call. Retries (every 4096th call) while
  // CPython is absent, for embedders that load libpython after CUDA.
  static PythonFrames& Instance();

  // True when this thread can be walked right now (CPython present, initialised, GIL held here).
  bool ThreadHoldsGil();

  // Walks the calling thread's frames innermost first, up to `max_frames`, and returns the first
  // whose code `is_user` accepts (the innermost walked frame when none is: better a library line
  // than nothing). `out->code` gets one reference the caller keeps or drops (Release). False when
  // the thread has no Python frame or does not hold the GIL.
  bool FindUserFrame(int max_frames, IsUserCode is_user, void* context, PythonFrame* out);

  // The same, and then up to `max_out - 1` more user frames further out (its callers, walking
  // past library frames between them), within `max_frames` walked in all. Returns how many of
  // `out` were filled (0: no frame; a lone library frame when no user code is on the stack);
  // each holds a reference the caller drops (Release).
  int FindUserFrames(int max_frames, IsUserCode is_user, void* context, PythonFrame* out,
                     int max_out);

  // Whether AddPendingCall can work in this process (CPython with Py_AddPendingCall).
  bool CanAddPendingCall();
  // Queues `func(arg)` to run on CPython's main thread, with the GIL held, at its next check of
  // the eval loop's breaker (Py_AddPendingCall: any thread, no GIL needed). The only way
  // gpuspy's own threads reach into Python: they never take the GIL. False when CPython is
  // absent, not initialised, finalising, or its queue (32 calls) is full. `func` must return 0
  // and leave no exception set.
  bool AddPendingCall(int (*func)(void*), void* arg);

  // co_filename and co_qualname (co_name before 3.11) of a code object; GIL held. A pending
  // Python exception is preserved (the CUDA call may run inside an exception handler).
  bool CodeNames(PyCode code, std::string* file, std::string* function);

  // Py_IncRef / Py_DecRef on a code object; GIL held.
  void Retain(PyCode code);
  void Release(PyCode code);

  bool available() { return Resolve(); }

 private:
  PythonFrames() = default;
  bool Resolve();

  struct Api;
  std::atomic<const Api*> api_{nullptr};  // published once, never freed
  std::atomic<uint32_t> misses_{0};       // spaces the retries out
};

}  // namespace gpuspy::inject
