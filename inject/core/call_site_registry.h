// Call sites of the calling thread ("train.py:57 train_step", or "libfoo.so+0x1234 symbol" when
// no Python frame is available), interned into small process-wide ids. Runs on application
// threads inside CUDA calls, so a site seen before costs table lookups only: no string work, no
// allocation, no lock that can block (a busy table makes the capture return 0, counted).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "inject/core/python_frames.h"
#include "model/call_site.h"

namespace gpuspy::inject {

struct CallSiteOptions {
  // A frame whose file (Python co_filename, or native object path) contains any of these is
  // walked past (GPUSPY_CALLSITE_SKIP). The CUDA/CUPTI libraries and gpuspy itself are always
  // walked past for native frames.
  std::vector<std::string> skip = {"/torch/", "<frozen "};
  int max_python_frames = 32;
  // User frames kept beyond the site's own (GPUSPY_CALLSITE_CALLERS): its callers, outermost
  // last, so a helper's line says who called it ("metrics.py:12 log ← train.py:57 train_step").
  // Each distinct chain is its own site.
  int callers = kDefaultCallSiteCallers;
  bool native = true;  // GPUSPY_CALLSITE_NATIVE: dladdr of the first foreign return address
  // Python file names under this directory are shown relative to it (the process's cwd).
  std::string base_dir;
};

struct CallSiteStats {
  std::atomic<uint64_t> python{0};   // captures answered with a Python frame
  std::atomic<uint64_t> native{0};   // ... with a native frame
  std::atomic<uint64_t> none{0};     // no frame found (or native disabled)
  std::atomic<uint64_t> busy{0};     // another thread held the tables: not captured
  std::atomic<uint64_t> full{0};     // the tables are full: a new site was not captured
};

class CallSiteRegistry {
 public:
  static constexpr uint32_t kMaxSites = 1u << 15;
  static constexpr uint32_t kMaxCodes = 1u << 14;

  explicit CallSiteRegistry(CallSiteOptions options);
  ~CallSiteRegistry();
  CallSiteRegistry(const CallSiteRegistry&) = delete;
  CallSiteRegistry& operator=(const CallSiteRegistry&) = delete;

  // The calling thread's site id; 0 when none. Any thread.
  __attribute__((noinline)) uint32_t Capture();
  // The calling thread's Python site id, with no native fallback and not counted in stats();
  // 0 when it runs no Python or does not hold the GIL. The host sampler's capture.
  uint32_t CapturePython() { return PythonSite(); }
  // The text of a site id ("" for 0 or unknown). Any thread; stable once returned.
  std::string_view Text(uint32_t id) const;
  uint32_t sites() const { return next_site_.load(std::memory_order_acquire) - 1; }
  const CallSiteStats& stats() const { return stats_; }

  // A Python file name as shown: relative to base_dir when under it, else from the package
  // directory on when under site-packages/dist-packages, else unchanged.
  static std::string_view ShortPath(std::string_view file, std::string_view base_dir);
  // "path:LINE function".
  static std::string FormatPython(std::string_view path, int line, std::string_view function);
  static constexpr int kMaxCallers = kMaxCallSiteCallers;

 private:
  struct CodeInfo {
    PyCode code;  // one reference held: the address can never be reused by another code object
    bool skip;
    std::string label;  // shortened path
    std::string function;
  };
  struct Slot {
    uint64_t key;  // 0 = empty
    uint32_t value;
  };

  uint32_t PythonSite();
  __attribute__((noinline)) uint32_t NativeSite();
  static bool IsUserCode(PyCode code, void* walk);
  // Code object -> index into codes_ (+1), inserting on first sight; 0 when full or busy.
  uint32_t CodeIndex(PyCode code, bool* skip);
  bool Skipped(std::string_view file) const;

  bool Lock();
  void Unlock() { busy_.clear(std::memory_order_release); }
  // Under the lock.
  Slot* FindSlot(uint64_t key);
  uint32_t NewSite(std::string text);

  const CallSiteOptions options_;
  std::atomic_flag busy_ = ATOMIC_FLAG_INIT;
  Slot* slots_;        // open addressing, kSlots entries, keys: code<<...|line, or an address
  Slot* code_slots_;   // code pointer -> index into codes_ + 1
  std::vector<CodeInfo> codes_;  // reserved to kMaxCodes: never reallocates
  std::atomic<const std::string*>* texts_;  // kMaxSites entries, published with release
  std::atomic<uint32_t> next_site_{1};
  CallSiteStats stats_;
};

}  // namespace gpuspy::inject
