// A real CPython inside a unit test: `library` (one of Debian's libpython3.X.so.1.0) is
// dlopen'ed RTLD_GLOBAL, as a python3 binary's would be found by dlsym(RTLD_DEFAULT, ...), and
// initialised once. Returns PyRun_SimpleString (0 on success), or null with `*error` set.
#pragma once

#include <dlfcn.h>

#include <string>

namespace gpuspy::testing {

using RunPython = int (*)(const char* source);

inline RunPython StartEmbeddedPython(const char* library, std::string* error) {
  void* lib = dlopen(library, RTLD_NOW | RTLD_GLOBAL);
  if (lib == nullptr) {
    *error = dlerror();
    return nullptr;
  }
  auto init = reinterpret_cast<void (*)(int)>(dlsym(lib, "Py_InitializeEx"));
  auto is_initialized = reinterpret_cast<int (*)()>(dlsym(lib, "Py_IsInitialized"));
  auto run = reinterpret_cast<RunPython>(dlsym(lib, "PyRun_SimpleString"));
  if (init == nullptr || is_initialized == nullptr || run == nullptr) {
    *error = std::string(library) + " lacks Py_InitializeEx, Py_IsInitialized or PyRun_SimpleString";
    return nullptr;
  }
  if (is_initialized() == 0) init(0);  // no signal handlers: the test owns them
  return run;
}

}  // namespace gpuspy::testing
