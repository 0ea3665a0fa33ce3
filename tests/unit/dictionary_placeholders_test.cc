// Stand-ins for the definitions a lost batch carried (codec/dictionary_placeholders.h): a batch
// that uses names only an earlier, lost batch defined decodes with them, every event kept.
#include "codec/dictionary_placeholders.h"

#include <gtest/gtest.h>

#include "codec/batch_decoder.h"
#include "codec/batch_encoder.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy {
namespace {

// A kernel, an API call and an NVTX range: names of every table (strings, kernel signatures,
// streams, threads, APIs).
EventColumns Events(StringTable* strings, int64_t t) {
  EventColumns ev;
  KernelEvent k;
  k.start_ns = t;
  k.end_ns = t + 10;
  k.correlation_id = 1;
  k.name = strings->Intern("gemm");
  k.stream = {0, 1, 7};
  ev.kernels.push_back(k);
  ApiEvent a;
  a.start_ns = t;
  a.end_ns = t + 5;
  a.correlation_id = 1;
  a.domain = ApiDomain::kRuntime;
  a.cbid = 211;
  a.name = strings->Intern("cudaLaunchKernel");
  a.thread_id = 42;
  a.call_site = strings->Intern("train.py:10");
  ev.apis.push_back(a);
  NvtxRangeEvent r;
  r.start_ns = t;
  r.end_ns = t + 20;
  r.message = strings->Intern("ProfilerStep#1");
  r.thread_id = 42;
  ev.nvtx_ranges.push_back(r);
  return ev;
}

class PlaceholdersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BatchEncoder encoder(&strings_);
    encoder.Encode(Events(&strings_, 1000), 1, {}, &first_);
    encoder.Encode(Events(&strings_, 2000), 2, {}, &second_);  // defines nothing: all sent with 1
  }
  StringTable strings_;
  v1::EventBatch first_, second_;
};

TEST_F(PlaceholdersTest, ABatchWhoseDefinitionsWereLostDecodesWithStandIns) {
  ProcessDictionary dict;  // batch 1 is lost
  EventColumns out;
  ASSERT_FALSE(DecodeBatch(second_, dict, &out).ok());
  size_t count = 0;
  const v1::Dictionary stand_ins = PlaceholdersForUndefinedRefs(second_, dict, &count);
  // gemm's signature, the stream, the thread, the API, the call site and the range's message.
  EXPECT_EQ(count, 6u);
  ASSERT_TRUE(dict.Apply(stand_ins).ok());
  ASSERT_TRUE(DecodeBatch(second_, dict, &out).ok());
  EXPECT_EQ(out.size(), 3u);
  EXPECT_EQ(dict.strings().Get(out.kernels[0].name), kPlaceholderName);
  EXPECT_EQ(dict.strings().Get(out.apis[0].name), kPlaceholderName);
  EXPECT_NE(dict.strings().Get(out.nvtx_ranges[0].message).find("(lost string"), std::string::npos);
}

TEST_F(PlaceholdersTest, NothingIsStoodInForWhenTheDefinitionsAreKnown) {
  ProcessDictionary dict;
  ASSERT_TRUE(dict.Apply(first_.dictionary()).ok());
  size_t count = 1;
  EXPECT_EQ(PlaceholdersForUndefinedRefs(second_, dict, &count).ByteSizeLong(), 0u);
  EXPECT_EQ(count, 0u);
  // A batch that carries its own definitions needs none either.
  ProcessDictionary empty;
  EXPECT_EQ(PlaceholdersForUndefinedRefs(first_, empty, &count).ByteSizeLong(), 0u);
}

}  // namespace
}  // namespace gpuspy
