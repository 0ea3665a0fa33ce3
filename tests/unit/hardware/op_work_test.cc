// An op's FLOPs and bytes from its profiler event (importers/kineto/op_work.h): each formula
// against a hand computation, and the shapes that must give nothing.
#include "importers/kineto/op_work.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

namespace gpuspy::importers {
namespace {

// Inputs as the profiler lists them: dims per input, a type per input.
struct Inputs {
  std::vector<int64_t> dims;
  std::vector<uint32_t> ends;
  std::vector<std::string_view> types;

  Inputs(std::initializer_list<std::vector<int64_t>> per_input, std::vector<std::string_view> t)
      : types(std::move(t)) {
    for (const auto& d : per_input) {
      dims.insert(dims.end(), d.begin(), d.end());
      ends.push_back(static_cast<uint32_t>(dims.size()));
    }
  }
  OpInputs View() const { return {dims, ends, types}; }
};

TEST(OpWork, MatmulFlopsAndBytesFromShapes) {
  const Inputs mm({{2048, 125}, {125, 320}}, {"float", "float"});
  const auto w = OpWorkOf("aten::mm", "", mm.View());
  ASSERT_TRUE(w);
  EXPECT_EQ(w->flops, 2ull * 2048 * 125 * 320);
  EXPECT_EQ(w->bytes, 4ull * (2048 * 125 + 125 * 320 + 2048 * 320));
  EXPECT_EQ(w->dtype, "float");
  EXPECT_EQ(w->source, WorkSource::kInputShapes);
}

TEST(OpWork, AddmmCountsTheProductNotTheBiasAndReadsTheBias) {
  const Inputs addmm({{3906}, {2048, 512}, {512, 3906}, {}, {}},
                     {"c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"});
  const auto w = OpWorkOf("aten::addmm", "", addmm.View());
  ASSERT_TRUE(w);
  EXPECT_EQ(w->flops, 2ull * 2048 * 512 * 3906);
  EXPECT_EQ(w->bytes, 2ull * (3906 + 2048 * 512 + 512 * 3906 + 2048 * 3906));
  EXPECT_EQ(w->dtype, "c10::BFloat16");
}

TEST(OpWork, BatchedMatmulAndAttention) {
  const Inputs bmm({{8, 64, 32}, {8, 32, 16}}, {"c10::Half", "c10::Half"});
  const auto b = OpWorkOf("aten::bmm", "", bmm.View());
  ASSERT_TRUE(b);
  EXPECT_EQ(b->flops, 2ull * 8 * 64 * 16 * 32);
  // q [B,H,L,E] k [B,H,S,E] v [B,H,S,E]: QK^T and PV, 2 B H L S E each.
  const Inputs sdpa({{2, 16, 1024, 64}, {2, 16, 1024, 64}, {2, 16, 1024, 64}},
                    {"c10::BFloat16", "c10::BFloat16", "c10::BFloat16"});
  const auto a = OpWorkOf("aten::scaled_dot_product_attention", "", sdpa.View());
  ASSERT_TRUE(a);
  EXPECT_EQ(a->flops, 4ull * 2 * 16 * 1024 * 1024 * 64);
  EXPECT_EQ(a->bytes, 2ull * 4 * (2 * 16 * 1024 * 64));
}

TEST(OpWork, TheProfilersFlopsWinAndConvolutionsNeedThem) {
  const Inputs conv({{32, 64, 56, 56}, {64, 64, 3, 3}, {}, {}, {}, {}, {}},
                    {"float", "float", "", "", "", "", ""});
  EXPECT_FALSE(OpWorkOf("aten::conv2d", "", conv.View())) << "no strides: no FLOPs from shapes";
  const auto c = OpWorkOf("aten::conv2d", "7398752256", conv.View());
  ASSERT_TRUE(c);
  EXPECT_EQ(c->flops, 7398752256u);
  EXPECT_EQ(c->source, WorkSource::kProfilerFlops);
  EXPECT_EQ(c->bytes, 4ull * (32 * 64 * 56 * 56 + 64 * 64 * 3 * 3));
  const Inputs mm({{16, 16}, {16, 16}}, {"float", "float"});
  const auto m = OpWorkOf("aten::mm", "9000", mm.View());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->flops, 9000u);
  EXPECT_EQ(m->source, WorkSource::kProfilerFlops);
}

TEST(OpWork, MemoryBoundOpsCountEachTensorOnce) {
  const Inputs add({{1024, 1024}, {1024, 1024}, {}}, {"float", "float", "Scalar"});
  const auto a = OpWorkOf("aten::add", "", add.View());
  ASSERT_TRUE(a);
  EXPECT_EQ(a->flops, 0u);
  EXPECT_EQ(a->bytes, 3ull * 4 * 1024 * 1024) << "two reads, one write";
  const auto in_place = OpWorkOf("aten::add_", "", add.View());
  ASSERT_TRUE(in_place);
  EXPECT_EQ(in_place->bytes, 3ull * 4 * 1024 * 1024) << "self and other read, self written";
  const Inputs copy({{1024}, {1024}, {}}, {"c10::BFloat16", "float", "Scalar"});
  const auto c = OpWorkOf("aten::copy_", "", copy.View());
  ASSERT_TRUE(c);
  EXPECT_EQ(c->bytes, 2ull * 1024 + 4ull * 1024) << "src read, dst written";
}

TEST(OpWork, ShapesThatAreNoMatmulGiveNothing) {
  const Inputs mismatched({{2048, 125}, {126, 320}}, {"float", "float"});
  EXPECT_FALSE(OpWorkOf("aten::mm", "", mismatched.View()));
  const Inputs negative({{-1, 125}, {125, 320}}, {"float", "float"});
  EXPECT_FALSE(OpWorkOf("aten::mm", "", negative.View()));
  const Inputs huge({{int64_t{1} << 40, int64_t{1} << 40}, {int64_t{1} << 40, 2}}, {"float", "float"});
  EXPECT_FALSE(OpWorkOf("aten::mm", "", huge.View())) << "refused, not wrapped";
  const Inputs mm({{16, 16}, {16, 16}}, {"float", "float"});
  EXPECT_FALSE(OpWorkOf("aten::linear", "", mm.View())) << "its addmm child counts";
  EXPECT_FALSE(OpWorkOf("aten::mm", "not a number", Inputs({}, {}).View()));
  EXPECT_TRUE(IsWorkOp("aten::mm"));
  EXPECT_FALSE(IsWorkOp("aten::linear"));
}

}  // namespace
}  // namespace gpuspy::importers
