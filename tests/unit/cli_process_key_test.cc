#include "viewer/cli/process_key.h"

#include <gtest/gtest.h>

namespace gpuspy::cli {
namespace {

TEST(SameProcessKey, TheKeyItselfOrGpuspydsPerUidNamespace) {
  EXPECT_TRUE(SameProcessKey("node1:4242:99", "node1:4242:99"));
  EXPECT_TRUE(SameProcessKey("uid1000/node1:4242:99", "node1:4242:99"));
}

TEST(SameProcessKey, NearMisses) {
  EXPECT_FALSE(SameProcessKey("uid1000/node1:4242:98", "node1:4242:99"));  // another process
  EXPECT_FALSE(SameProcessKey("uidx/node1:4242:99", "node1:4242:99"));     // not a uid
  EXPECT_FALSE(SameProcessKey("uid/node1:4242:99", "node1:4242:99"));
  EXPECT_FALSE(SameProcessKey("abc1000/node1:4242:99", "node1:4242:99"));
  EXPECT_FALSE(SameProcessKey("node1:4242:99", "uid1000/node1:4242:99"));
}

}  // namespace
}  // namespace gpuspy::cli
