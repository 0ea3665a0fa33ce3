#include "inject/core/call_site_registry.h"

#include <dlfcn.h>
#include <execinfo.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>

namespace gpuspy::inject {
namespace {

// Twice the sites (and codes), so probes stay short at the fill bound.
constexpr uint32_t kSlots = CallSiteRegistry::kMaxSites * 2;
constexpr uint32_t kCodeSlots = CallSiteRegistry::kMaxCodes * 2;
constexpr uint32_t kSkippedNative = 0xffffffffu;  // a return address inside skipped code
constexpr uint64_t kPythonKey = 1ull << 63;        // user-space addresses never set this bit
constexpr uint64_t kChainKey = 1ull << 62;         // with kPythonKey: a site with its callers
// A few spins cover a lookup in progress on another thread (tens of ns); longer means a miss
// being filled, and the application must not wait for it.
constexpr int kLockSpins = 64;
constexpr int kNativeFrames = 24;
// Native code that is never the user's: CUPTI, the driver, the runtime, gpuspy itself.
constexpr const char* kNativeInternals[] = {"libcupti", "libcuda.so", "libcudart", "libgpuspy"};

uint32_t Hash(uint64_t key, uint32_t slots) {
  return static_cast<uint32_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & (slots - 1);
}

std::string_view Basename(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// What the walk learned: the code index of each user frame it accepted, in the order
// FindUserFrames hands those frames back, so the site is keyed without looking them up again.
struct Walk {
  CallSiteRegistry* self;
  uint32_t user_indexes[1 + CallSiteRegistry::kMaxCallers] = {};
  int users = 0;
};

}  // namespace

CallSiteRegistry::CallSiteRegistry(CallSiteOptions options)
    : options_(std::move(options)),
      slots_(static_cast<Slot*>(std::calloc(kSlots, sizeof(Slot)))),
      code_slots_(static_cast<Slot*>(std::calloc(kCodeSlots, sizeof(Slot)))),
      texts_(static_cast<std::atomic<const std::string*>*>(
          std::calloc(kMaxSites, sizeof(std::atomic<const std::string*>)))) {
  codes_.reserve(kMaxCodes);
}

CallSiteRegistry::~CallSiteRegistry() {
  for (uint32_t i = 1; i < next_site_.load(); ++i) delete texts_[i].load();
  // The code references are left alone: the interpreter may be gone, and a leaked reference to
  // a code object costs nothing.
  std::free(slots_);
  std::free(code_slots_);
  std::free(texts_);
}

bool CallSiteRegistry::Lock() {
  for (int i = 0; i < kLockSpins; ++i) {
    if (!busy_.test_and_set(std::memory_order_acquire)) return true;
  }
  stats_.busy.fetch_add(1, std::memory_order_relaxed);
  return false;
}

CallSiteRegistry::Slot* CallSiteRegistry::FindSlot(uint64_t key) {
  for (uint32_t i = Hash(key, kSlots), n = 0; n < kSlots; i = (i + 1) & (kSlots - 1), ++n) {
    if (slots_[i].key == key || slots_[i].key == 0) return &slots_[i];
  }
  return nullptr;
}

uint32_t CallSiteRegistry::NewSite(std::string text) {
  const uint32_t id = next_site_.load(std::memory_order_relaxed);
  if (id >= kMaxSites) {
    stats_.full.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  texts_[id].store(new std::string(std::move(text)), std::memory_order_release);
  next_site_.store(id + 1, std::memory_order_release);
  return id;
}

std::string_view CallSiteRegistry::Text(uint32_t id) const {
  if (id == 0 || id >= kMaxSites) return {};
  const std::string* text = texts_[id].load(std::memory_order_acquire);
  return text != nullptr ? std::string_view(*text) : std::string_view();
}

bool CallSiteRegistry::Skipped(std::string_view file) const {
  for (const std::string& s : options_.skip) {
    if (!s.empty() && file.find(s) != std::string_view::npos) return true;
  }
  return false;
}

std::string_view CallSiteRegistry::ShortPath(std::string_view file, std::string_view base_dir) {
  if (!base_dir.empty() && file.size() > base_dir.size() + 1 && file.starts_with(base_dir) &&
      file[base_dir.size()] == '/') {
    return file.substr(base_dir.size() + 1);
  }
  for (std::string_view packages : {"/site-packages/", "/dist-packages/"}) {
    if (const size_t at = file.rfind(packages); at != std::string_view::npos) {
      return file.substr(at + packages.size());
    }
  }
  return file;
}

std::string CallSiteRegistry::FormatPython(std::string_view path, int line,
                                           std::string_view function) {
  std::string out(path);
  out += ':';
  out += std::to_string(line);
  if (!function.empty()) {
    out += ' ';
    out += function;
  }
  return out;
}

uint32_t CallSiteRegistry::Capture() {
  if (const uint32_t site = PythonSite(); site != 0) {
    stats_.python.fetch_add(1, std::memory_order_relaxed);
    return site;
  }
  if (options_.native) {
    if (const uint32_t site = NativeSite(); site != 0) {
      stats_.native.fetch_add(1, std::memory_order_relaxed);
      return site;
    }
  }
  stats_.none.fetch_add(1, std::memory_order_relaxed);
  return 0;
}

uint32_t CallSiteRegistry::CodeIndex(PyCode code, bool* skip) {
  const uint64_t key = reinterpret_cast<uintptr_t>(code);
  if (!Lock()) return 0;
  Slot* slot = nullptr;
  for (uint32_t i = Hash(key, kCodeSlots), n = 0; n < kCodeSlots;
       i = (i + 1) & (kCodeSlots - 1), ++n) {
    if (code_slots_[i].key == key || code_slots_[i].key == 0) {
      slot = &code_slots_[i];
      break;
    }
  }
  if (slot != nullptr && slot->key == key) {
    const uint32_t index = slot->value;
    *skip = codes_[index - 1].skip;
    Unlock();
    return index;
  }
  Unlock();
  // First sight of this code object: its names, outside the lock (the GIL is held, so no other
  // thread of this interpreter is in here with the same object).
  std::string file, function;
  if (!PythonFrames::Instance().CodeNames(code, &file, &function)) return 0;
  const bool skipped = Skipped(file);
  *skip = skipped;
  if (!Lock()) return 0;
  uint32_t index = 0;
  for (uint32_t i = Hash(key, kCodeSlots), n = 0; n < kCodeSlots;
       i = (i + 1) & (kCodeSlots - 1), ++n) {
    if (code_slots_[i].key == key) {  // another interpreter's thread was quicker
      index = code_slots_[i].value;
      break;
    }
    if (code_slots_[i].key == 0) {
      if (codes_.size() >= kMaxCodes) break;
      PythonFrames::Instance().Retain(code);
      codes_.push_back(
          {code, skipped, std::string(ShortPath(file, options_.base_dir)), std::move(function)});
      index = static_cast<uint32_t>(codes_.size());
      code_slots_[i] = {key, index};
      break;
    }
  }
  Unlock();
  if (index == 0) stats_.full.fetch_add(1, std::memory_order_relaxed);
  return index;
}

bool CallSiteRegistry::IsUserCode(PyCode code, void* walk) {
  auto* w = static_cast<Walk*>(walk);
  bool skip = false;
  const uint32_t index = w->self->CodeIndex(code, &skip);
  if (index == 0) return false;  // unknown: walk on (the innermost frame stays the fallback)
  if (!skip && w->users < static_cast<int>(std::size(w->user_indexes))) {
    w->user_indexes[w->users++] = index;
  }
  return !skip;
}

uint32_t CallSiteRegistry::PythonSite() {
  PythonFrames& py = PythonFrames::Instance();
  Walk walk{this};
  PythonFrame frames[1 + kMaxCallers];
  const int wanted = 1 + std::clamp(options_.callers, 0, kMaxCallers);
  const int n = py.FindUserFrames(options_.max_python_frames, &CallSiteRegistry::IsUserCode,
                                  &walk, frames, wanted);
  // The code index and line of each frame: the site's key is all of them.
  uint32_t indexes[1 + kMaxCallers] = {};
  bool usable = n > 0;
  for (int i = 0; i < n && usable; ++i) {
    // The walk looked every user frame up already; only its library fallback is new here.
    uint32_t index = i < walk.users ? walk.user_indexes[i] : 0;
    if (index == 0) {
      bool skip = false;
      index = CodeIndex(frames[i].code, &skip);
    }
    indexes[i] = index;
    usable = index != 0 && frames[i].line >= 0;
  }
  uint32_t site = 0;
  if (usable) {
    // One frame: its code and line, exactly. A chain: a hash of every (code, line), marked
    // apart (bit 62; code indexes stay below 2^15) so it never meets a one-frame key.
    uint64_t key = kPythonKey | static_cast<uint64_t>(indexes[0]) << 32 |
                   static_cast<uint32_t>(frames[0].line);
    if (n > 1) {
      uint64_t h = 1469598103934665603ull;
      for (int i = 0; i < n; ++i) {
        h = (h ^ (static_cast<uint64_t>(indexes[i]) << 32 | static_cast<uint32_t>(frames[i].line))) *
            0x100000001b3ull;
      }
      key = kPythonKey | kChainKey | (h & (kChainKey - 1));
    }
    if (Lock()) {
      Slot* slot = FindSlot(key);
      if (slot != nullptr && slot->key == key) {
        site = slot->value;
      } else if (slot != nullptr) {
        std::string text;
        for (int i = 0; i < n; ++i) {
          const CodeInfo& info = codes_[indexes[i] - 1];
          if (i > 0) text += kCallerSeparator;
          text += FormatPython(info.label, frames[i].line, info.function);
        }
        site = NewSite(std::move(text));
        if (site != 0) *slot = {key, site};
      } else {
        stats_.full.fetch_add(1, std::memory_order_relaxed);
      }
      Unlock();
    }
  }
  for (int i = 0; i < n; ++i) py.Release(frames[i].code);
  return site;
}

uint32_t CallSiteRegistry::NativeSite() {
  void* frames[kNativeFrames];
  const int n = backtrace(frames, kNativeFrames);
  // Capture's caller is the frame after our return address into Capture (both noinline). Found
  // by value, not assumed at index 2: a sanitizer's backtrace interceptor adds frames of its own.
  void* const into_capture = __builtin_return_address(0);
  int first = 2;
  for (int i = 0; i < n; ++i) {
    if (frames[i] == into_capture) {
      first = i + 1;
      break;
    }
  }
  for (int i = first; i < n; ++i) {
    // A return address points after the call: -1 names the calling instruction's symbol.
    const uint64_t key = reinterpret_cast<uintptr_t>(frames[i]) - 1;
    if (!Lock()) return 0;
    Slot* slot = FindSlot(key);
    const uint32_t known = slot != nullptr && slot->key == key ? slot->value : 0;
    Unlock();
    if (known == kSkippedNative) continue;
    if (known != 0) return known;
    // First sight of this return address: dladdr (the loader's lock) outside ours.
    Dl_info info{};
    const bool resolved = dladdr(reinterpret_cast<void*>(key), &info) != 0 && info.dli_fname != nullptr;
    const std::string_view object = resolved ? info.dli_fname : "";
    bool skip = resolved && Skipped(object);
    for (const char* internal : kNativeInternals) skip |= object.find(internal) != std::string_view::npos;
    uint32_t site = kSkippedNative;
    std::string text;
    if (!skip) {
      char offset[32];
      const uintptr_t base = resolved ? reinterpret_cast<uintptr_t>(info.dli_fbase) : 0;
      std::snprintf(offset, sizeof(offset), "+0x%llx",
                    static_cast<unsigned long long>(key - base));
      text = resolved ? std::string(Basename(object)) : std::string("?");
      text += offset;
      if (resolved && info.dli_sname != nullptr) {
        text += ' ';
        text += info.dli_sname;
      }
    }
    if (!Lock()) return 0;
    slot = FindSlot(key);
    if (slot != nullptr && slot->key == key) {
      site = slot->value;  // another thread was quicker
    } else if (slot != nullptr) {
      if (!skip) site = NewSite(std::move(text));
      if (site != 0) *slot = {key, site};
    } else {
      stats_.full.fetch_add(1, std::memory_order_relaxed);
      site = 0;
    }
    Unlock();
    if (site == kSkippedNative) continue;
    return site;
  }
  return 0;
}

}  // namespace gpuspy::inject
