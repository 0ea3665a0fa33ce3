// The job name import/analyze give files without --job: one file's stem; several files' shared
// name less the rank (not the first file's rank, which titled a 4-rank report "rank0"), else the
// shared directory, else the first stem and a count.
#include "viewer/cli/job_name_for_files.h"

#include "gtest/gtest.h"

namespace gpuspy::cli {
namespace {

TEST(JobNameForFiles, OneFileIsItsNameUpToTheFirstDot) {
  EXPECT_EQ(JobNameForFiles({"runs/rank0.pt.trace.json.gz"}), "rank0");
  EXPECT_EQ(JobNameForFiles({"resnet.json"}), "resnet");
}

TEST(JobNameForFiles, SeveralFilesShareTheirNameLessTheRank) {
  EXPECT_EQ(JobNameForFiles({"t/llama_rank0.pt.trace.json", "t/llama_rank1.pt.trace.json"}), "llama");
  EXPECT_EQ(JobNameForFiles({"a/bert-large-worker3.json.gz", "b/bert-large-worker12.json.gz"}), "bert-large");
  EXPECT_EQ(JobNameForFiles({"x/resnet50_2021_autograd_nw4_rank0.json", "x/resnet50_2021_autograd_nw4_rank1.json"}),
            "resnet50_2021_autograd_nw4");
  // Near miss: the shared start is kept when it is not a rank word ("gpt2" keeps its digit).
  EXPECT_EQ(JobNameForFiles({"gpt2_a.json", "gpt2_b.json"}), "gpt2");
}

TEST(JobNameForFiles, NamesThatShareOnlyTheRankTakeTheirDirectory) {
  EXPECT_EQ(JobNameForFiles({"runs/ddp_bf16/rank0.json", "runs/ddp_bf16/rank1.json"}), "ddp_bf16");
  EXPECT_EQ(JobNameForFiles({"/data/job7/worker0.json", "/data/job7/worker1.json", "/data/job7/worker2.json"}),
            "job7");
}

TEST(JobNameForFiles, NothingSharedIsTheFirstNameAndACount) {
  EXPECT_EQ(JobNameForFiles({"a/rank0.json", "b/rank1.json"}), "rank0+1");
  EXPECT_EQ(JobNameForFiles({"a/x.json", "b/y.json", "c/z.json"}), "x+2");
}

}  // namespace
}  // namespace gpuspy::cli
