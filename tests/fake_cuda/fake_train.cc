// "The user's application": a small training loop on the fake CUDA. It knows nothing about
// gpuspy. With --expect it writes what it did, so a test can check the collector got exactly that.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/fake_cuda/fake_cuda.h"

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
  fake_cuda_memcpy(FAKE_HTOD, FAKE_PAGEABLE, FAKE_DEVICE, 4 << 20, /*async=*/0, kStream, 0);
  c.memcpy++, c.runtime_api++;
  for (int k = 0; k < kernels; ++k) {
    const char* name = kKernels[k % 5];
    if (k == 0) {
      fake_cuda_push_external_id(1000 + step);  // e.g. the aten op that launched it
      c.external_correlations++;
    }
    fake_cuda_launch_kernel(name, {80, 1, 1}, {256, 1, 1}, 0, kStream, 20000 + 1000 * (k % 7));
    names.push_back(name);
    c.kernels++, c.runtime_api++;
  }
  fake_cuda_launch_kernel_nvcc13("my_custom_kernel(float*, int)", {1, 1, 1}, {128, 1, 1}, 0,
                                 kStream, 15000);
  names.push_back("my_custom_kernel(float*, int)");
  c.kernels++, c.runtime_api++;
  fake_cu_launch_kernel_ex("triton_poi_fused_add_0", {64, 1, 1}, {128, 1, 1}, 0, kStream, 8000);
  names.push_back("triton_poi_fused_add_0");
  c.kernels++, c.driver_api++;
  fake_cuda_graph_launch(3, kStream, 5000);  // a captured CUDA graph: 3 kernel nodes, one launch
  for (int g = 0; g < 3; ++g) names.push_back("graph_node_kernel");
  c.kernels += 3, c.graph_launches++, c.runtime_api++;
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

}  // namespace

int main(int argc, char** argv) {
  int steps = 5, kernels = 20, sleep_us = 0;
  long launch_loop = 0;
  bool no_cuda = false, fork_child = false, exec_child = false, print_maps = false;
  std::string expect;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--steps") steps = std::atoi(next().c_str());
    else if (a == "--kernels") kernels = std::atoi(next().c_str());
    else if (a == "--sleep-us") sleep_us = std::atoi(next().c_str());
    else if (a == "--no-cuda") no_cuda = true;
    else if (a == "--fork") fork_child = true;
    else if (a == "--exec-child") exec_child = true;
    else if (a == "--print-maps") print_maps = true;
    else if (a == "--expect") expect = next();
    else if (a == "--launch-loop") launch_loop = std::atol(next().c_str());
    else {
      std::fprintf(stderr,
                   "fake_train: unknown flag %s\nusage: fake_train [--steps N] [--kernels K] "
                   "[--sleep-us U] [--no-cuda] [--fork] [--exec-child] [--print-maps] "
                   "[--expect FILE] [--launch-loop N]\n",
                   a.c_str());
      return 2;
    }
  }
  if (launch_loop > 0) return LaunchLoop(launch_loop);
  Counts c;
  std::vector<std::vector<std::string>> names;  // per step, in launch order
  if (!no_cuda) {
    fake_cuda_mempool_create(1ull << 30);
    c.memory_pools++;
    std::vector<uint64_t> blocks;
    for (int i = 0; i < 3; ++i) {
      blocks.push_back(fake_cuda_malloc(64ull << 20));
      c.alloc++, c.runtime_api++;
    }
    for (int s = 0; s < steps; ++s) {
      Step(s, kernels, c, names.emplace_back());
      if (sleep_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
      if (s == 0 && fork_child) {
        // A child that does CUDA work after fork() without exec: must not break, and gpuspy's
        // copy in it must stay inert.
        if (fork() == 0) {
          Counts child;
          std::vector<std::string> ignored;
          for (int cs = 0; cs < 2; ++cs) Step(100 + cs, 3, child, ignored);
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
    }
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
    j["steps"] = steps;
    std::vector<std::string> all;
    for (const auto& step : names) all.insert(all.end(), step.begin(), step.end());
    j["kernel_names"] = all;
    j["step_kernel_names"] = names;
    std::ofstream(expect) << j.dump(2);
  }
  return 0;
}
