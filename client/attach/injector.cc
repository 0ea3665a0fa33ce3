#include "client/attach/injector.h"

#include <dlfcn.h>

#include <optional>

#include "absl/strings/str_cat.h"
#include "client/attach/elf_symbols.h"
#include "client/attach/traced_thread.h"

namespace gpuspy::attach {
namespace {

// How long to keep trying for a stop outside libc and the dynamic loader.
constexpr std::chrono::milliseconds kSettle{2000};
// glibc before 2.34 has dlopen in libdl, which a process need not load; libc itself always has
// these (GLIBC_PRIVATE), and __libc_dlopen_mode wants __RTLD_DLOPEN in its mode.
constexpr uint64_t kRtldDlopen = 0x80000000;

struct LibcCalls {
  uint64_t dlopen = 0, dlsym = 0, dlerror = 0, dlclose = 0;
  uint64_t mode_bits = 0;
};

absl::StatusOr<uint64_t> Resolve(const Target& target, const ElfInfo& elf, const std::string& file,
                                 std::string_view name) {
  absl::StatusOr<uint64_t> value = DynamicSymbolValue(file, name);
  if (!value.ok()) return value.status();
  return target.libc.base - elf.first_load_vaddr + *value;
}

absl::StatusOr<LibcCalls> FindLibcCalls(const Target& target) {
  const std::string file = TargetPath(target.pid, target.libc.path);
  absl::StatusOr<ElfInfo> elf = ReadElfInfo(file);
  if (!elf.ok()) return elf.status();
  LibcCalls c;
  absl::StatusOr<uint64_t> dlopen_at = Resolve(target, *elf, file, "dlopen");
  absl::StatusOr<uint64_t> dlsym_at = Resolve(target, *elf, file, "dlsym");
  if (dlopen_at.ok() && dlsym_at.ok()) {
    c.dlopen = *dlopen_at;
    c.dlsym = *dlsym_at;
    if (absl::StatusOr<uint64_t> e = Resolve(target, *elf, file, "dlerror"); e.ok()) c.dlerror = *e;
    if (absl::StatusOr<uint64_t> e = Resolve(target, *elf, file, "dlclose"); e.ok()) c.dlclose = *e;
    return c;
  }
  dlopen_at = Resolve(target, *elf, file, "__libc_dlopen_mode");
  dlsym_at = Resolve(target, *elf, file, "__libc_dlsym");
  if (!dlopen_at.ok() || !dlsym_at.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot find dlopen in ", target.libc.path, " of pid ", target.pid, ": ",
        dlopen_at.ok() ? dlsym_at.status().message() : dlopen_at.status().message()));
  }
  c.dlopen = *dlopen_at;
  c.dlsym = *dlsym_at;
  c.mode_bits = kRtldDlopen;
  if (absl::StatusOr<uint64_t> e = Resolve(target, *elf, file, "__libc_dlclose"); e.ok()) c.dlclose = *e;
  return c;
}

// The dynamic loader's text, where a stop could be inside a lazy binding.
std::optional<LoadedObject> Loader(const Target& target) {
  std::optional<LoadedObject> ld = FindObject(target.maps, "ld-linux");
  return ld.has_value() ? ld : FindObject(target.maps, "ld-");
}

}  // namespace

absl::StatusOr<RemoteCallResult> CallInProcess(const Target& target, const std::string& library,
                                               const std::string& function,
                                               const std::string& argument, LoadPolicy policy) {
  absl::StatusOr<LibcCalls> libc = FindLibcCalls(target);
  if (!libc.ok()) return libc.status();
  const std::optional<LoadedObject> ld = Loader(target);
  const LoadedObject libc_object = target.libc;
  auto unsafe = [&](uint64_t ip) {
    return InText(libc_object, ip) || (ld.has_value() && InText(*ld, ip));
  };
  absl::StatusOr<std::unique_ptr<TracedThread>> thread =
      TracedThread::Seize(target.pid, target.pid, unsafe, kSettle);
  if (!thread.ok()) return thread.status();
  TracedThread& t = **thread;
  auto fail = [&](absl::Status st) -> absl::Status {
    (void)t.Release();
    return st;
  };
  absl::StatusOr<uint64_t> lib_at = t.Push(library);
  absl::StatusOr<uint64_t> fn_at = t.Push(function);
  absl::StatusOr<uint64_t> arg_at = t.Push(argument);
  if (!lib_at.ok() || !fn_at.ok() || !arg_at.ok()) {
    return fail(!lib_at.ok() ? lib_at.status() : !fn_at.ok() ? fn_at.status() : arg_at.status());
  }
  const uint64_t mode = RTLD_NOW | (policy == LoadPolicy::kOnlyIfLoaded ? RTLD_NOLOAD : 0) | libc->mode_bits;
  absl::StatusOr<uint64_t> handle = t.Call(libc->dlopen, {*lib_at, mode});
  if (!handle.ok()) return fail(handle.status());
  if (*handle == 0) {
    if (policy == LoadPolicy::kOnlyIfLoaded) {
      return fail(absl::NotFoundError(absl::StrCat("gpuspy is not loaded in pid ", target.pid,
                                                   " (nothing to detach)")));
    }
    std::string why = "is it readable by the process's user, and visible in its mount namespace?";
    if (libc->dlerror != 0) {
      if (absl::StatusOr<uint64_t> text = t.Call(libc->dlerror, {}); text.ok() && *text != 0) {
        if (absl::StatusOr<std::string> s = t.ReadString(*text, 512); s.ok()) why = *s;
      }
    }
    return fail(absl::FailedPreconditionError(
        absl::StrCat("pid ", target.pid, " could not load ", library, ": ", why)));
  }
  absl::StatusOr<uint64_t> fn = t.Call(libc->dlsym, {*handle, *fn_at});
  if (!fn.ok()) return fail(fn.status());
  if (*fn == 0) {
    return fail(absl::FailedPreconditionError(
        absl::StrCat(library, " in pid ", target.pid, " has no ", function, " (an older gpuspy?)")));
  }
  absl::StatusOr<uint64_t> value = t.Call(*fn, {*arg_at});
  if (!value.ok()) return fail(value.status());
  // RTLD_NOLOAD still took a reference: give it back, the library stays as loaded as it was.
  if (policy == LoadPolicy::kOnlyIfLoaded && libc->dlclose != 0) (void)t.Call(libc->dlclose, {*handle});
  if (absl::Status st = t.Release(); !st.ok()) return st;
  return RemoteCallResult{.value = static_cast<int32_t>(*value),
                          .pause = t.stopped_for(),
                          .was_in_syscall = t.was_in_syscall()};
}

}  // namespace gpuspy::attach
