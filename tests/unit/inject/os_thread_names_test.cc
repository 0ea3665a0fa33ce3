// Live capture names its threads (inject/core/os_thread_names.h): the OS name of each host thread
// in the events, read once; GPU-only events and gone threads give none.
#include "inject/core/os_thread_names.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

namespace gpuspy::inject {
namespace {

TEST(OsThreadNames, ReadsEachHostThreadsCommOnce) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("os_thread_names_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir / "12");
  std::ofstream(dir / "12" / "comm") << "pt_pin_memory\n";
  StringTable strings;
  OsThreadNames names(&strings, dir.string());
  EventColumns ev;
  ev.apis.push_back({0, 1, 1, ApiDomain::kRuntime, 211, strings.Intern("cudaLaunchKernel"), 12, 0});
  ev.nvtx_marks.push_back({5, 0, strings.Intern("m"), 13});  // no comm file: the thread is gone
  names.Learn(ev);
  ASSERT_EQ(names.names().size(), 1u);
  EXPECT_EQ(strings.Get(names.names().at(12)), "pt_pin_memory");
  // Looked up once: a later rename is not re-read.
  std::ofstream(dir / "12" / "comm") << "renamed\n";
  names.Learn(ev);
  EXPECT_EQ(strings.Get(names.names().at(12)), "pt_pin_memory");
  std::filesystem::remove_all(dir);
}

TEST(OsThreadNames, ReadsARealThreadsName) {
  std::atomic<pid_t> tid{0};
  std::atomic<bool> done{false};
  std::thread t([&] {
    pthread_setname_np(pthread_self(), "pt_data_worker");
    tid = static_cast<pid_t>(syscall(SYS_gettid));
    while (!done) std::this_thread::yield();
  });
  while (tid == 0) std::this_thread::yield();
  StringTable strings;
  OsThreadNames names(&strings);
  EventColumns ev;
  ev.overheads.push_back({0, 1, strings.Intern("cupti_buffer_flush"), static_cast<uint32_t>(tid.load())});
  names.Learn(ev);
  done = true;
  t.join();
  ASSERT_TRUE(names.names().contains(static_cast<uint32_t>(tid.load())));
  EXPECT_EQ(strings.Get(names.names().at(static_cast<uint32_t>(tid.load()))), "pt_data_worker");
}

}  // namespace
}  // namespace gpuspy::inject
