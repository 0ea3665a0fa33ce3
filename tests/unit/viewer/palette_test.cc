// The viewer's one palette: a kernel class never wears a cause's colour (the "GPU time" bar sits
// beside the step's time bar, where red means sync-blocked), and every class the classifier names
// has a style.
#include <string>

#include "analysis/kernel_classifier.h"
#include "gtest/gtest.h"
#include "viewer/palette/kernel_classes.h"
#include "viewer/palette/time_causes.h"

namespace gpuspy::palette {
namespace {

TEST(Palette, NoKernelClassTakesACauseColour) {
  for (const KernelClassStyle& k : KernelClassStyles()) {
    for (const TimeCauseStyle& c : TimeCauseStyles()) {
      EXPECT_NE(std::string(k.color), std::string(c.color)) << k.key << " looks like " << c.key;
    }
  }
  const KernelClassStyle* elementwise = nullptr;
  for (const KernelClassStyle& k : KernelClassStyles()) {
    if (std::string(k.key) == "elementwise") elementwise = &k;
  }
  ASSERT_NE(elementwise, nullptr);
  EXPECT_NE(std::string(elementwise->color), StyleOf(v1::TIME_CAUSE_SYNC).color);
}

TEST(Palette, EveryClassifierClassHasAStyle) {
  using analysis::KernelClass;
  for (KernelClass c : {KernelClass::kOther, KernelClass::kTensorCoreMath, KernelClass::kSimtFp32Gemm,
                        KernelClass::kCommunication, KernelClass::kFusedAttention,
                        KernelClass::kMemoryBound, KernelClass::kTriton}) {
    const std::string name(analysis::KernelClassName(c));
    bool found = false;
    for (const KernelClassStyle& k : KernelClassStyles()) found |= name == k.key;
    EXPECT_TRUE(found) << name;
  }
}

TEST(Palette, TheServedModuleCarriesTheClasses) {
  const std::string js = TimeCausesJsModule();
  EXPECT_NE(js.find("export const KERNEL_CLASSES = Object.freeze({"), std::string::npos) << js;
  EXPECT_NE(js.find("\"elementwise\":{\"color\":\"#ff9da7\""), std::string::npos) << js;
}

}  // namespace
}  // namespace gpuspy::palette
