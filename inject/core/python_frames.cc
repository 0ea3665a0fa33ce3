#include "inject/core/python_frames.h"

#include <dlfcn.h>

namespace gpuspy::inject {

// The CPython entry points, as plain C function pointers on opaque objects.
struct PythonFrames::Api {
  int (*IsInitialized)();
  int (*GilStateCheck)();
  // PyThreadState_GetUnchecked (3.13) / _PyThreadState_UncheckedGet (3.5-3.12): the thread's
  // current state or NULL, never a fatal error (PyThreadState_Get aborts without one).
  void* (*CurrentThreadState)();
  void* (*ThreadStateGetFrame)(void* tstate);   // new reference
  void* (*FrameGetCode)(void* frame);           // new reference
  int (*FrameGetLineNumber)(void* frame);
  void* (*FrameGetBack)(void* frame);           // new reference
  void (*IncRef)(void* object);
  void (*DecRef)(void* object);
  void* (*GetAttrString)(void* object, const char* name);  // new reference
  const char* (*UnicodeAsUtf8)(void* unicode);
  void (*ErrFetch)(void** type, void** value, void** traceback);
  void (*ErrRestore)(void* type, void* value, void* traceback);
  // For the host sampler (host_sampler.h); NULL where absent, which only turns the sampler off.
  int (*AddPendingCall)(int (*func)(void*), void* arg);
  int (*IsFinalizing)();  // Py_IsFinalizing (3.13) / _Py_IsFinalizing (3.7-3.12)
};

namespace {

template <typename F>
bool Find(const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
  return *out != nullptr;
}

}  // namespace

PythonFrames& PythonFrames::Instance() {
  static PythonFrames* instance = new PythonFrames();  // never destroyed: callbacks run at exit
  return *instance;
}

bool PythonFrames::Resolve() {
  if (api_.load(std::memory_order_acquire) != nullptr) return true;
  // dlsym takes the loader lock and walks every object: a process without CPython pays it once,
  // then once per 4096 calls (an embedder may load libpython late).
  if (misses_.fetch_add(1, std::memory_order_relaxed) % 4096 != 0) return false;
  Api a{};
  bool ok = Find("Py_IsInitialized", &a.IsInitialized) &&
            Find("PyGILState_Check", &a.GilStateCheck) &&
            (Find("PyThreadState_GetUnchecked", &a.CurrentThreadState) ||
             Find("_PyThreadState_UncheckedGet", &a.CurrentThreadState)) &&
            // PyThreadState_GetFrame is the 3.9 marker: older CPython stays unwalked.
            Find("PyThreadState_GetFrame", &a.ThreadStateGetFrame) &&
            Find("PyFrame_GetCode", &a.FrameGetCode) &&
            Find("PyFrame_GetLineNumber", &a.FrameGetLineNumber) &&
            Find("PyFrame_GetBack", &a.FrameGetBack) && Find("Py_IncRef", &a.IncRef) &&
            Find("Py_DecRef", &a.DecRef) && Find("PyObject_GetAttrString", &a.GetAttrString) &&
            Find("PyUnicode_AsUTF8", &a.UnicodeAsUtf8) && Find("PyErr_Fetch", &a.ErrFetch) &&
            Find("PyErr_Restore", &a.ErrRestore);
  if (!ok) return false;
  if (!Find("Py_IsFinalizing", &a.IsFinalizing)) (void)Find("_Py_IsFinalizing", &a.IsFinalizing);
  if (a.IsFinalizing != nullptr) (void)Find("Py_AddPendingCall", &a.AddPendingCall);
  const Api* expected = nullptr;
  const Api* mine = new Api(a);
  if (!api_.compare_exchange_strong(expected, mine, std::memory_order_acq_rel)) delete mine;
  return true;
}

bool PythonFrames::ThreadHoldsGil() {
  if (!Resolve()) return false;
  const Api* a = api_.load(std::memory_order_acquire);
  // PyGILState_Check answers 1 for every thread once a subinterpreter exists (3.9-3.11 docs), so
  // a current thread state is required as well: it is NULL while this thread runs without the
  // GIL (Py_BEGIN_ALLOW_THREADS, which PyTorch's bindings use around most ops).
  return a->IsInitialized() != 0 && a->GilStateCheck() == 1 && a->CurrentThreadState() != nullptr;
}

bool PythonFrames::CanAddPendingCall() {
  if (!Resolve()) return false;
  return api_.load(std::memory_order_acquire)->AddPendingCall != nullptr;
}

bool PythonFrames::AddPendingCall(int (*func)(void*), void* arg) {
  if (!CanAddPendingCall()) return false;
  const Api* a = api_.load(std::memory_order_acquire);
  // Py_AddPendingCall needs neither the GIL nor a thread state (its documented contract), but it
  // reaches the main interpreter: not before initialisation, not once finalisation has begun.
  if (a->IsInitialized() == 0 || a->IsFinalizing() != 0) return false;
  return a->AddPendingCall(func, arg) == 0;
}

bool PythonFrames::FindUserFrame(int max_frames, IsUserCode is_user, void* context,
                                 PythonFrame* out) {
  return FindUserFrames(max_frames, is_user, context, out, 1) == 1;
}

int PythonFrames::FindUserFrames(int max_frames, IsUserCode is_user, void* context,
                                 PythonFrame* out, int max_out) {
  if (max_out < 1 || !ThreadHoldsGil()) return 0;
  const Api* a = api_.load(std::memory_order_acquire);
  void* frame = a->ThreadStateGetFrame(a->CurrentThreadState());
  PythonFrame innermost;
  int found = 0;
  for (int depth = 0; frame != nullptr && depth < max_frames && found < max_out; ++depth) {
    void* code = a->FrameGetCode(frame);
    if (code != nullptr) {
      if (is_user(code, context)) {
        out[found++] = {code, a->FrameGetLineNumber(frame)};
      } else if (found == 0 && innermost.code == nullptr) {
        innermost = {code, a->FrameGetLineNumber(frame)};
      } else {
        a->DecRef(code);
      }
    }
    void* back = found == max_out ? nullptr : a->FrameGetBack(frame);
    a->DecRef(frame);
    frame = back;
  }
  if (frame != nullptr) a->DecRef(frame);
  if (found > 0) {
    if (innermost.code != nullptr) a->DecRef(innermost.code);
    return found;
  }
  if (innermost.code == nullptr) return 0;
  out[0] = innermost;
  return 1;
}

bool PythonFrames::CodeNames(PyCode code, std::string* file, std::string* function) {
  const Api* a = api_.load(std::memory_order_acquire);
  if (a == nullptr || code == nullptr) return false;
  auto drop_error = [a] {
    void *type = nullptr, *value = nullptr, *traceback = nullptr;
    a->ErrFetch(&type, &value, &traceback);
    a->DecRef(type);  // Py_DecRef accepts NULL
    a->DecRef(value);
    a->DecRef(traceback);
  };
  auto text = [a](void* object, const char* attribute, std::string* into) {
    void* s = a->GetAttrString(object, attribute);
    if (s == nullptr) return false;
    const char* utf8 = a->UnicodeAsUtf8(s);
    if (utf8 != nullptr) *into = utf8;
    a->DecRef(s);
    return utf8 != nullptr;
  };
  void *type = nullptr, *value = nullptr, *traceback = nullptr;
  a->ErrFetch(&type, &value, &traceback);
  bool ok = text(code, "co_filename", file);
  // co_qualname ("Trainer.step") is 3.11+; co_name ("step") before.
  if (ok && !text(code, "co_qualname", function)) {
    drop_error();
    ok = text(code, "co_name", function);
  }
  drop_error();
  a->ErrRestore(type, value, traceback);
  return ok;
}

void PythonFrames::Retain(PyCode code) {
  if (const Api* a = api_.load(std::memory_order_acquire); a != nullptr) a->IncRef(code);
}

void PythonFrames::Release(PyCode code) {
  if (const Api* a = api_.load(std::memory_order_acquire); a != nullptr) a->DecRef(code);
}

}  // namespace gpuspy::inject
