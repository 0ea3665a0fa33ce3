// Call-site capture on the application's threads (inject/core/call_sites.h): what one captured
// site costs (a Python frame with the GIL held, a native frame otherwise), what a launch costs
// with sampling on, and the wire bytes a call site adds to an API event. The Python cases run
// inside a real interpreter (libpython dlopen'ed, LIBPYTHON): the benchmark loop itself runs in
// a C function that Python called through ctypes, three Python frames deep, as a CUDA call from
// a training loop would.
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <thread>

#include "codec/batch_encoder.h"
#include "inject/core/call_sites.h"

namespace gpuspy::inject {
namespace {

CallSiteConfig Config(bool native, bool launch_auto, uint32_t period,
                      uint32_t gap_us = kDefaultGapCaptureUs) {
  CallSiteConfig c;
  c.frames.native = native;
  c.launch_auto = launch_auto;
  c.launch_period = period;
  c.gap_us = gap_us;
  return c;
}

// Drains the marks as the pipeline thread would, so producers never see a full queue.
class Drainer {
 public:
  explicit Drainer(CallSiteQueue* q) : thread_([this, q] {
      while (!stop_.load()) q->Drain([](uint64_t, uint32_t) {});
    }) {}
  ~Drainer() {
    stop_.store(true);
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

benchmark::State* g_state = nullptr;
void (*g_body)(benchmark::State&) = nullptr;
extern "C" int RunBody() {
  g_body(*g_state);
  return 0;
}

#ifdef LIBPYTHON
bool InPython() {
  static int (*run)(const char*) = [] {
    void* lib = dlopen(LIBPYTHON, RTLD_NOW | RTLD_GLOBAL);
    if (lib == nullptr) return static_cast<int (*)(const char*)>(nullptr);
    reinterpret_cast<void (*)(int)>(dlsym(lib, "Py_InitializeEx"))(0);
    return reinterpret_cast<int (*)(const char*)>(dlsym(lib, "PyRun_SimpleString"));
  }();
  return run != nullptr;
}
#endif

// Runs `body` from Python: train() -> step() -> forward() -> ctypes (GIL held) -> body.
void FromPython(benchmark::State& state, void (*body)(benchmark::State&)) {
#ifdef LIBPYTHON
  if (!InPython()) {
    state.SkipWithError("no libpython");
    return;
  }
  g_state = &state;
  g_body = body;
  char script[512];
  std::snprintf(script, sizeof(script),
                "import ctypes\n"
                "body = ctypes.PYFUNCTYPE(ctypes.c_int)(%llu)\n"
                "def forward():\n    body()\n"
                "def step():\n    forward()\n"
                "def train():\n    step()\n"
                "train()\n",
                static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(&RunBody)));
  static auto run = reinterpret_cast<int (*)(const char*)>(dlsym(RTLD_DEFAULT, "PyRun_SimpleString"));
  if (run(script) != 0) state.SkipWithError("script failed");
#else
  state.SkipWithError("built without LIBPYTHON");
#endif
}

void CaptureLoop(benchmark::State& state) {
  static CallSiteRegistry* registry = new CallSiteRegistry(Config(true, true, 0).frames);
  for (auto _ : state) benchmark::DoNotOptimize(registry->Capture());
  state.counters["python"] = static_cast<double>(registry->stats().python.load());
}

// One captured site, already seen: the per-event cost of a blocking call's site.
void BM_CaptureSite_Python(benchmark::State& state) { FromPython(state, CaptureLoop); }

// The same with the site's callers kept (GPUSPY_CALLSITE_CALLERS = the argument): a longer walk
// and one more table lookup per frame.
void CallersLoop(benchmark::State& state) {
  static CallSiteRegistry* registries[CallSiteRegistry::kMaxCallers + 1] = {};
  const auto callers = static_cast<int>(state.range(0));
  if (registries[callers] == nullptr) {
    CallSiteOptions options = Config(false, true, 0).frames;
    options.callers = callers;
    registries[callers] = new CallSiteRegistry(options);
  }
  CallSiteRegistry* registry = registries[callers];
  uint32_t site = 0;
  for (auto _ : state) benchmark::DoNotOptimize(site = registry->Capture());
  state.SetLabel(std::string(registry->Text(site)));
}
void BM_CaptureSite_Python_Callers(benchmark::State& state) { FromPython(state, CallersLoop); }
void BM_CaptureSite_Native(benchmark::State& state) { CaptureLoop(state); }

// A blocking call's ENTER/EXIT: capture + queue push (the pipeline drains on another thread).
void BlockingLoop(benchmark::State& state) {
  static CallSites* sites = new CallSites(Config(true, true, 0));
  Drainer drainer(sites->queue());
  uint64_t corr = 1;
  for (auto _ : state) {
    sites->OnEnter(CallSiteKind::kBlocking, corr++);
    sites->OnExit(CallSiteKind::kBlocking);
  }
}
void BM_BlockingCall_Python(benchmark::State& state) { FromPython(state, BlockingLoop); }

// What a launch pays for call sites: adaptive 1-in-N sampling (the default), and every launch;
// with the gap-ender check (the default: one clock read per launch) or without (kGapUs = 0).
template <bool kAuto, uint32_t kGapUs = kDefaultGapCaptureUs>
void LaunchLoop(benchmark::State& state) {
  static CallSites* sites = new CallSites(Config(true, kAuto, kAuto ? 0 : 1, kGapUs));
  Drainer drainer(sites->queue());
  uint64_t corr = 1;
  for (auto _ : state) {
    sites->OnEnter(CallSiteKind::kLaunch, corr++);
    sites->OnExit(CallSiteKind::kLaunch);
  }
  state.counters["period"] = sites->launch_period();
}
void BM_Launch_Python_Auto(benchmark::State& state) { FromPython(state, LaunchLoop<true>); }
void BM_Launch_Python_Every(benchmark::State& state) { FromPython(state, LaunchLoop<false>); }
void BM_Launch_Native_Auto(benchmark::State& state) { LaunchLoop<true>(state); }
void BM_Launch_Python_Auto_NoGapCheck(benchmark::State& state) { FromPython(state, LaunchLoop<true, 0>); }

// Wire bytes per API event for its call-site column: a batch of 4096 API events, one in four
// with one of 40 sites (blocking calls and sampled launches), against the same batch without.
void BM_WireBytesPerEvent(benchmark::State& state) {
  StringTable strings;
  std::vector<StringRef> refs;
  for (int i = 0; i < 40; ++i) refs.push_back(strings.Intern("train.py:" + std::to_string(i) + " f"));
  EventColumns with, without;
  for (int i = 0; i < 4096; ++i) {
    ApiEvent e;
    e.start_ns = 1'000'000 + i * 5'000;
    e.end_ns = e.start_ns + 4'000;
    e.correlation_id = i + 1;
    e.domain = ApiDomain::kRuntime;
    e.cbid = 211;
    e.name = strings.Intern("cudaLaunchKernel_v7000");
    e.thread_id = 7;
    without.apis.push_back(e);
    e.call_site = i % 4 == 0 ? refs[(i / 4) % refs.size()] : 0;
    with.apis.push_back(e);
  }
  size_t bytes_with = 0, bytes_without = 0;
  for (auto _ : state) {
    BatchEncoder a(&strings), b(&strings);
    v1::EventBatch wa, wb;
    a.Encode(with, 1, {}, &wa);  // the first batch carries the dictionary: measure the second
    b.Encode(without, 1, {}, &wb);
    wa.Clear();
    wb.Clear();
    a.Encode(with, 2, {}, &wa);
    b.Encode(without, 2, {}, &wb);
    bytes_with = wa.ByteSizeLong();
    bytes_without = wb.ByteSizeLong();
  }
  state.counters["bytes_per_event"] =
      static_cast<double>(bytes_with - bytes_without) / static_cast<double>(with.apis.size());
}

BENCHMARK(BM_CaptureSite_Python);
BENCHMARK(BM_CaptureSite_Python_Callers)->Arg(0)->Arg(1)->Arg(2);
BENCHMARK(BM_CaptureSite_Native);
BENCHMARK(BM_BlockingCall_Python);
BENCHMARK(BM_Launch_Python_Auto);
BENCHMARK(BM_Launch_Python_Every);
BENCHMARK(BM_Launch_Native_Auto);
BENCHMARK(BM_Launch_Python_Auto_NoGapCheck);
BENCHMARK(BM_WireBytesPerEvent)->Iterations(3);

}  // namespace
}  // namespace gpuspy::inject

BENCHMARK_MAIN();
