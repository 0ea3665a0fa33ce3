// The timeline's names for host threads (analysis/thread_names.h): each rule fires on the names
// PyTorch's threads carry, and near misses keep the trace's own name.
#include "analysis/thread_names.h"

#include <gtest/gtest.h>

namespace gpuspy::analysis {
namespace {

TEST(ThreadDisplayName, TheThreadWhoseIdIsThePidIsTheMainThread) {
  EXPECT_EQ(ThreadDisplayName(4037, 4037, "thread 4037 (python3.8)"), "main thread");
  EXPECT_EQ(ThreadDisplayName(4037, 4037, ""), "main thread");
  // Near misses: another thread of the process, and an unknown pid.
  EXPECT_EQ(ThreadDisplayName(4038, 4037, "thread 4038 (python3.8)"), "thread 4038 (python3.8)");
  EXPECT_EQ(ThreadDisplayName(0, 0, ""), "thread 0");
}

TEST(ThreadDisplayName, DataLoaderWorkersAreNumberedFromTheirNames) {
  EXPECT_EQ(ThreadDisplayName(11, 10, "thread 11 (pt_data_worker_2)"), "dataloader worker 2");
  EXPECT_EQ(ThreadDisplayName(11, 10, "DataLoader worker 0"), "dataloader worker 0");
  EXPECT_EQ(ThreadDisplayName(11, 10, "pt_data_worker"), "dataloader worker");
  // Near miss: a data thread that is no loader worker.
  EXPECT_EQ(ThreadDisplayName(11, 10, "thread 11 (data_writer)"), "thread 11 (data_writer)");
}

TEST(ThreadDisplayName, ThePinMemoryThread) {
  EXPECT_EQ(ThreadDisplayName(12, 10, "thread 12 (pt_pin_memory)"), "pin-memory thread");
  EXPECT_EQ(ThreadDisplayName(12, 10, "pin memory thread"), "pin-memory thread");
  // Near miss: "pinned" is no pin-memory loop.
  EXPECT_EQ(ThreadDisplayName(12, 10, "pinned_alloc"), "pinned_alloc");
}

TEST(ThreadDisplayName, AnUnnamedThreadIsItsId) {
  EXPECT_EQ(ThreadDisplayName(2910, 10, ""), "thread 2910");
  EXPECT_EQ(ThreadDisplayName(2910, 10, "  "), "thread 2910");
}

}  // namespace
}  // namespace gpuspy::analysis
