// "The user's application": a small training loop on the fake CUDA. It knows nothing about
// gpuspy. With --expect it writes what it did, so a test can check the collector got exactly that;
// the other flags reproduce how real training processes start children and end.
#include <signal.h>
#include <sys/prctl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/fake_cuda/fake_cuda.h"

extern char** environ;

namespace {

const char* const kKernels[] = {
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
    "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
    "ampere_sgemm_128x64_tn",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >",
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*, float const*, float const*, float*, float*, float*)",
};

constexpr uint32_t kStream = 7;
constexpr uint32_t kCommStream = 13;  // NCCL's own stream

// --fast-gpu: the simulated GPU work takes 1/100 of its time (and the input copy 1/1000 of its
// bytes), so the program launches as fast as the host can: events per second of a launch-bound
// loop, for tests that need a lot of events quickly.
uint64_t g_gpu_divisor = 1;
uint64_t g_copy_divisor = 1;

// --kernel-us / --compute-scale: how long the model's kernels run (default 20-26 us each), and a
// factor on that (a straggler computing more per step).
uint64_t g_kernel_ns = 0;
double g_compute_scale = 1.0;

// --allreduce-barrier DIR: every step ends its backward with a gradient all-reduce across the
// job's processes (RANK / WORLD_SIZE from the environment, as torchrun sets them). The fake NCCL
// kernel starts when this process arrives and ends when the last of them has arrived plus the
// transfer time; the processes tell each other their arrivals through files in DIR.
std::string g_barrier_dir;
int g_rank = 0;
int g_world_size = 1;
// 100 MiB of gradients at ~100 GB/s busBw among 4 ranks: ~1.5 ms once everyone is there.
constexpr uint64_t kAllReduceTransferNs = 1'500'000;
// A peer that has not arrived after this long is gone: fail instead of hanging the test.
constexpr auto kBarrierTimeout = std::chrono::seconds(30);
constexpr auto kBarrierPoll = std::chrono::microseconds(200);
const char* const kAllReduceKernel =
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";

std::string ArrivalFile(int step, int rank) {
  return g_barrier_dir + "/step" + std::to_string(step) + ".rank" + std::to_string(rank);
}

// Publishes this rank's arrival at `step`'s all-reduce, waits for every rank's, and returns
// when the collective ends: the last arrival plus the transfer.
uint64_t AllReduceEnd(uint64_t arrival_ns, void* arg) {
  const int step = *static_cast<const int*>(arg);
  const std::string mine = ArrivalFile(step, g_rank);
  {
    std::ofstream(mine + ".tmp") << arrival_ns << "\n";
  }
  std::rename((mine + ".tmp").c_str(), mine.c_str());  // peers never read half a file
  uint64_t last = arrival_ns;
  const auto deadline = std::chrono::steady_clock::now() + kBarrierTimeout;
  for (int r = 0; r < g_world_size; ++r) {
    uint64_t theirs = 0;
    while (!(std::ifstream(ArrivalFile(step, r)) >> theirs)) {
      if (std::chrono::steady_clock::now() > deadline) {
        std::fprintf(stderr, "fake_train: rank %d never reached step %d's all-reduce\n", r, step);
        std::_Exit(6);
      }
      std::this_thread::sleep_for(kBarrierPoll);
    }
    last = std::max(last, theirs);
  }
  return last + kAllReduceTransferNs;
}

// --counters: what the performance monitor sees while each kernel runs (percent of the tensor
// pipes' and DRAM's peak), set before its launch: tensor-core GEMMs keep the tensor pipes busy,
// memory-bound kernels (elementwise, reduction, norm) stream DRAM, the rest sits in between.
bool g_counters = false;
void Profile(std::string_view name) {
  if (!g_counters) return;
  if (name.find("xmma_gemm") != std::string_view::npos) {
    fake_gpu_kernel_counters(80, 30);
  } else if (name.find("sgemm") != std::string_view::npos) {
    fake_gpu_kernel_counters(0, 20);
  } else if (name.find("elementwise") != std::string_view::npos ||
             name.find("reduce_kernel") != std::string_view::npos ||
             name.find("layer_norm") != std::string_view::npos) {
    fake_gpu_kernel_counters(0, 90);
  } else {
    fake_gpu_kernel_counters(0, 40);
  }
}

uint64_t KernelNs(int k) {
  const uint64_t base = g_kernel_ns > 0 ? g_kernel_ns : 20000 + 1000 * (k % 7);
  return static_cast<uint64_t>(static_cast<double>(base) * g_compute_scale) / g_gpu_divisor;
}

// What the program did, per kind of event a profiler should report.
struct Counts {
  int kernels = 0, runtime_api = 0, driver_api = 0, memcpy = 0, memset = 0, sync = 0, alloc = 0,
      free = 0, nvtx_ranges = 0, nvtx_marks = 0, external_correlations = 0, memory_pools = 0,
      graph_launches = 0;
  nlohmann::json ToJson() const {
    return {{"kernels", kernels}, {"runtime_api", runtime_api}, {"driver_api", driver_api},
            {"memcpy", memcpy},   {"memset", memset},           {"sync", sync},
            {"alloc", alloc},     {"free", free},               {"nvtx_ranges", nvtx_ranges},
            {"nvtx_marks", nvtx_marks}, {"external_correlations", external_correlations},
            {"memory_pools", memory_pools}, {"graph_launches", graph_launches}};
  }
};

// One training step, as PyTorch does it: input upload, the model's kernels (ATen, cuBLAS, a
// custom nvcc 13 kernel, a Triton kernel, a captured CUDA graph), a memset, loss.item().
void Step(int step, int kernels, Counts& c, std::vector<std::string>& names) {
  const std::string range = "ProfilerStep#" + std::to_string(step);
  fake_nvtx_range_push(range.c_str());
  fake_cuda_memcpy(FAKE_HTOD, FAKE_PAGEABLE, FAKE_DEVICE, (4 << 20) / g_copy_divisor, /*async=*/0,
                   kStream, 0);
  c.memcpy++, c.runtime_api++;
  for (int k = 0; k < kernels; ++k) {
    const char* name = kKernels[k % 5];
    if (k == 0) {
      fake_cuda_push_external_id(1000 + step);  // e.g. the aten op that launched it
      c.external_correlations++;
    }
    Profile(name);
    fake_cuda_launch_kernel(name, {80, 1, 1}, {256, 1, 1}, 0, kStream, KernelNs(k));
    names.push_back(name);
    c.kernels++, c.runtime_api++;
  }
  Profile("my_custom_kernel");
  fake_cuda_launch_kernel_nvcc13("my_custom_kernel(float*, int)", {1, 1, 1}, {128, 1, 1}, 0,
                                 kStream, 15000 / g_gpu_divisor);
  names.push_back("my_custom_kernel(float*, int)");
  c.kernels++, c.runtime_api++;
  fake_cu_launch_kernel_ex("triton_poi_fused_add_0", {64, 1, 1}, {128, 1, 1}, 0, kStream,
                           8000 / g_gpu_divisor);
  names.push_back("triton_poi_fused_add_0");
  c.kernels++, c.driver_api++;
  fake_cuda_graph_launch(3, kStream, 5000 / g_gpu_divisor);  // a captured CUDA graph: 3 kernel nodes, one launch
  for (int g = 0; g < 3; ++g) names.push_back("graph_node_kernel");
  c.kernels += 3, c.graph_launches++, c.runtime_api++;
  if (!g_barrier_dir.empty()) {
    // DDP: NCCL's stream waits for the gradients, the optimizer waits for the reduced ones.
    fake_cuda_stream_wait_stream(kCommStream, kStream);
    fake_cuda_launch_collective(kAllReduceKernel, {4, 1, 1}, {512, 1, 1}, kCommStream,
                                &AllReduceEnd, &step);
    fake_cuda_stream_wait_stream(kStream, kCommStream);
    names.push_back(kAllReduceKernel);
    c.kernels++, c.runtime_api += 3, c.sync += 2;
  }
  fake_cuda_memset(1 << 20, 0, kStream, /*async=*/1);
  c.memset++, c.runtime_api++;
  fake_cuda_memcpy(FAKE_DTOH, FAKE_DEVICE, FAKE_PAGEABLE, 4, /*async=*/1, kStream, 0);  // loss.item()
  c.memcpy++, c.runtime_api++;
  fake_cuda_stream_synchronize(kStream);
  c.sync++, c.runtime_api++;
  fake_nvtx_mark("logged");
  c.nvtx_marks++;
  fake_nvtx_range_pop();
  c.nvtx_ranges++;
}

// The launch-overhead benchmark's workload: `n` back-to-back launches of a tiny kernel, the
// pattern of a launch-bound PyTorch loop. Prints the host time per launch as JSON.
int LaunchLoop(long n) {
  // A real CUDA process is never single-threaded (the driver starts its own threads). Without a
  // second thread, glibc locks mutexes non-atomically, and the first thread any injected library
  // starts would show up as "overhead" of every mutex the fake takes.
  std::atomic<bool> done{false};
  std::thread driver_thread([&] {
    while (!done.load()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  });
  fake_cuda_launch_kernel(kKernels[0], {1, 1, 1}, {32, 1, 1}, 0, kStream, 1000);  // warm up
  fake_cuda_stream_synchronize(kStream);
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < n; ++i) {
    fake_cuda_launch_kernel(kKernels[0], {1, 1, 1}, {32, 1, 1}, 0, kStream, 1000);
  }
  const auto elapsed = std::chrono::steady_clock::now() - start;
  const double ns = std::chrono::duration<double, std::nano>(elapsed).count() / static_cast<double>(n);
  std::printf("{\"launches\": %ld, \"ns_per_launch\": %.2f}\n", n, ns);
  done.store(true);
  driver_thread.join();
  fake_cuda_context_destroy();
  return 0;
}

// Set by the SIGTERM/SIGINT handler of --handle-signals: the loop finishes its step and the
// program ends normally, as a Python training script catching KeyboardInterrupt does.
volatile sig_atomic_t g_stop_signal = 0;

void OnStopSignal(int sig) { g_stop_signal = sig; }

// Peak resident memory so far (VmHWM), in KiB; 0 if /proc is unreadable.
long PeakRssKb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return 0;
}

// Runs this program again as a fresh process (exec'd children are injected on their own).
// posix_spawn, as Python's subprocess and multiprocessing's "spawn" start method use: glibc
// implements it with clone(CLONE_VM | CLONE_VFORK), so no pthread_atfork handler runs in the
// child, unlike fork().
int SpawnChild(const char* self) {
  char* child_argv[] = {const_cast<char*>(self), const_cast<char*>("--steps"),
                        const_cast<char*>("2"), const_cast<char*>("--kernels"),
                        const_cast<char*>("3"), nullptr};
  pid_t pid = 0;
  if (posix_spawn(&pid, self, nullptr, nullptr, child_argv, environ) != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// --exit-stats: written by an exit handler registered before CUDA is first used, so it runs after
// every handler a profiler registers later (exit handlers run in reverse order): the peak memory
// then includes whatever the profiler did at exit.
std::string g_exit_stats;
void WriteExitStats() {
  std::ofstream(g_exit_stats) << "{\"vm_hwm_kb\": " << PeakRssKb() << "}\n";
}

// How the program ends once its steps are done (--end).
enum class EndMode { kReturn, kExitFromThread, kQuickExit, kAbort };

}  // namespace

int main(int argc, char** argv) {
  int steps = 5, kernels = 20, sleep_us = 0;
  long launch_loop = 0;
  bool no_cuda = false, fork_child = false, fork_exit = false, exec_child = false,
       spawn_child = false, print_maps = false, until_signal = false, handle_signals = false,
       lean = false;
  EndMode end = EndMode::kReturn;
  std::string expect, ready_file;
  int fork_step = 0;  // --fork-at S: the step after which the child is forked
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--steps") steps = std::atoi(next().c_str());
    else if (a == "--kernels") kernels = std::atoi(next().c_str());
    else if (a == "--sleep-us") sleep_us = std::atoi(next().c_str());
    else if (a == "--no-cuda") no_cuda = true;
    else if (a == "--fork") fork_child = true;
    else if (a == "--fork-exit") fork_child = fork_exit = true;
    else if (a == "--fork-at") fork_child = true, fork_step = std::atoi(next().c_str());
    // Like a process that hides from debuggers: the kernel lets no one else ptrace it.
    else if (a == "--undumpable") prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    else if (a == "--exec-child") exec_child = true;
    else if (a == "--spawn-child") spawn_child = true;
    else if (a == "--print-maps") print_maps = true;
    else if (a == "--expect") expect = next();
    else if (a == "--launch-loop") launch_loop = std::atol(next().c_str());
    else if (a == "--until-signal") until_signal = true;
    else if (a == "--fast-gpu") g_gpu_divisor = 100, g_copy_divisor = 1000;
    else if (a == "--lean") lean = true;
    else if (a == "--exit-stats") g_exit_stats = next();
    else if (a == "--handle-signals") handle_signals = true;
    else if (a == "--ready-file") ready_file = next();
    else if (a == "--kernel-us") g_kernel_ns = std::strtoull(next().c_str(), nullptr, 10) * 1000;
    else if (a == "--compute-scale") g_compute_scale = std::atof(next().c_str());
    else if (a == "--allreduce-barrier") g_barrier_dir = next();
    else if (a == "--counters") g_counters = true;
    else if (a == "--end") {
      const std::string m = next();
      if (m == "return") end = EndMode::kReturn;
      else if (m == "exit-thread") end = EndMode::kExitFromThread;
      else if (m == "_exit") end = EndMode::kQuickExit;
      else if (m == "abort") end = EndMode::kAbort;
      else return std::fprintf(stderr, "fake_train: --end return|exit-thread|_exit|abort\n"), 2;
    } else {
      std::fprintf(stderr,
                   "fake_train: unknown flag %s\nusage: fake_train [--steps N] [--kernels K] "
                   "[--sleep-us U] [--no-cuda] [--fork | --fork-exit | --fork-at S] [--undumpable] "
                   "[--exec-child] "
                   "[--spawn-child] [--print-maps] [--expect FILE] [--launch-loop N] "
                   "[--until-signal [--handle-signals]] [--ready-file FILE] "
                   "[--end return|exit-thread|_exit|abort] [--fast-gpu] [--lean] "
                   "[--exit-stats FILE] [--kernel-us U] [--compute-scale X] "
                   "[--allreduce-barrier DIR] [--counters]\n",
                   a.c_str());
      return 2;
    }
  }
  if (launch_loop > 0) return LaunchLoop(launch_loop);
  if (!g_barrier_dir.empty()) {
    if (const char* rank = std::getenv("RANK")) g_rank = std::atoi(rank);
    if (const char* world = std::getenv("WORLD_SIZE")) g_world_size = std::atoi(world);
  }
  if (!g_exit_stats.empty()) std::atexit(WriteExitStats);
  if (handle_signals) {
    struct sigaction sa {};
    sa.sa_handler = OnStopSignal;
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);
  }
  Counts c;
  std::vector<std::vector<std::string>> names;  // per step, in launch order
  std::vector<int64_t> step_us;                 // wall time of each step
  std::vector<std::string> scratch;             // --lean: kernel names are not kept
  int steps_done = 0;
  if (!no_cuda) {
    fake_cuda_mempool_create(1ull << 30);
    c.memory_pools++;
    std::vector<uint64_t> blocks;
    for (int i = 0; i < 3; ++i) {
      blocks.push_back(fake_cuda_malloc(64ull << 20));
      c.alloc++, c.runtime_api++;
    }
    for (int s = 0; s < steps || (until_signal && g_stop_signal == 0); ++s) {
      if (s == steps && !ready_file.empty()) std::ofstream(ready_file) << s << "\n";
      const auto step_start = std::chrono::steady_clock::now();
      scratch.clear();
      Step(s, kernels, c, lean ? scratch : names.emplace_back());
      ++steps_done;
      step_us.push_back(std::chrono::duration_cast<std::chrono::microseconds>(
                            std::chrono::steady_clock::now() - step_start)
                            .count());
      if (sleep_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
      if (s == fork_step && fork_child) {
        // A child that does CUDA work after fork() without exec: must not break, and gpuspy's
        // copy in it must stay inert (also in its exit handlers, with --fork-exit).
        if (fork() == 0) {
          Counts child;
          std::vector<std::string> ignored;
          for (int cs = 0; cs < 2; ++cs) Step(100 + cs, 3, child, ignored);
          if (fork_exit) std::exit(0);
          _exit(0);
        }
        int status = 0;
        wait(&status);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 3;
      }
      if (s == 0 && exec_child) {
        // fork+exec: the new program is a fresh process and is injected on its own.
        if (fork() == 0) {
          execl(argv[0], argv[0], "--steps", "2", "--kernels", "3", static_cast<char*>(nullptr));
          _exit(127);
        }
        int status = 0;
        wait(&status);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 4;
      }
      if (s == 0 && spawn_child && SpawnChild(argv[0]) != 0) return 5;
      if (s + 1 >= steps && end == EndMode::kExitFromThread) {
        // exit() on another thread while this one keeps calling CUDA: the exit handlers (gpuspy's
        // final flush among them) run concurrently with the application's CUDA calls.
        std::thread([] {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          std::exit(0);
        }).detach();
        for (int more = 0;; ++more) Step(steps + more, kernels, c, names.emplace_back());
      }
    }
    if (end == EndMode::kQuickExit) _exit(0);  // os._exit(), as DataLoader workers end
    if (end == EndMode::kAbort) std::abort();
    for (uint64_t b : blocks) {
      fake_cuda_free(b);
      c.free++, c.runtime_api++;
    }
    fake_cuda_context_destroy();
  }
  if (print_maps) {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
      if (line.find("gpuspy") != std::string::npos) std::printf("%s\n", line.c_str());
    }
  }
  if (!expect.empty()) {
    nlohmann::json j = c.ToJson();
    j["steps"] = steps_done;
    std::vector<std::string> all;
    for (const auto& step : names) all.insert(all.end(), step.begin(), step.end());
    j["kernel_names"] = all;
    j["step_kernel_names"] = names;
    j["step_us"] = step_us;
    j["last_correlation_id"] = no_cuda ? 0 : fake_cuda_last_correlation_id();
    j["vm_hwm_kb"] = PeakRssKb();
    j["stop_signal"] = static_cast<int>(g_stop_signal);
    std::ofstream(expect) << j.dump(2);
  }
  return 0;
}
