#include "inject/core/os_thread_names.h"

#include <fstream>
#include <string_view>

namespace gpuspy::inject {

void OsThreadNames::Learn(const EventColumns& events) {
  // Host events carry the thread; GPU events do not.
  for (const auto& e : events.apis) LearnOne(e.thread_id);
  for (const auto& e : events.nvtx_ranges) LearnOne(e.thread_id);
  for (const auto& e : events.nvtx_marks) LearnOne(e.thread_id);
  for (const auto& e : events.overheads) LearnOne(e.thread_id);
}

void OsThreadNames::LearnOne(uint32_t tid) {
  if (tid == 0 || !seen_.insert(tid).second) return;
  std::ifstream comm(task_dir_ + "/" + std::to_string(tid) + "/comm");
  std::string name;
  if (!comm || !std::getline(comm, name)) return;
  while (!name.empty() && (name.back() == ' ' || name.back() == '\r')) name.pop_back();
  if (!name.empty()) names_[tid] = strings_->Intern(name);
}

}  // namespace gpuspy::inject
