// The OS names of the profiled process's threads (/proc/self/task/<tid>/comm: "python3",
// "pt_pin_memory", "pt_data_worker"), learned on the pipeline thread the first time a thread
// shows up in the events, and sent with the thread's definition (BatchEncoder::SetThreadNames),
// so the viewer's timeline can call its lane "pin-memory thread" (analysis/thread_names.h).
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::inject {

class OsThreadNames {
 public:
  // `task_dir`: where the threads' comm files lie ("/proc/self/task"; tests point elsewhere).
  OsThreadNames(StringTable* strings, std::string task_dir = "/proc/self/task")
      : strings_(strings), task_dir_(std::move(task_dir)) {}

  // Reads the name of each host thread of `events` not seen before. A thread that has exited
  // (its comm gone) stays unnamed; each thread is looked up once.
  void Learn(const EventColumns& events);

  // OS thread id -> name (a string of the table given at construction).
  const absl::flat_hash_map<uint32_t, StringRef>& names() const { return names_; }

 private:
  void LearnOne(uint32_t tid);

  StringTable* strings_;
  std::string task_dir_;
  absl::flat_hash_set<uint32_t> seen_;
  absl::flat_hash_map<uint32_t, StringRef> names_;
};

}  // namespace gpuspy::inject
