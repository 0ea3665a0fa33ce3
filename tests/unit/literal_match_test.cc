// Matches: a text against a literal by whole words, for every length class it has (1, 2-3, 4-7,
// 8 and more, with and without a partial last word), and every byte position a difference can
// sit at.
#include "importers/kineto/literal_match.h"

#include <gtest/gtest.h>

#include <string>

namespace gpuspy::importers {
namespace {

// Each byte of `literal` changed in turn must fail the match; the literal itself, and a text that
// holds it with bytes around it, must not be confused.
template <size_t N>
void ExpectMatchesOnlyItself(const char (&literal)[N]) {
  const std::string text(literal, N - 1);
  // Padding after the text: the words read never go past it, but a text in a larger buffer is
  // what the walk hands over.
  const std::string buffer = "[" + text + "]";
  const std::string_view inside(buffer.data() + 1, text.size());
  EXPECT_TRUE(Matches(inside, literal)) << text;
  for (size_t i = 0; i < text.size(); ++i) {
    std::string changed = buffer;
    changed[i + 1] ^= 0x20;
    EXPECT_FALSE(Matches(std::string_view(changed.data() + 1, text.size()), literal)) << text << " at " << i;
  }
  EXPECT_FALSE(Matches(std::string_view(buffer.data(), text.size() + 1), literal)) << text << ": longer";
  if (!text.empty()) {
    EXPECT_FALSE(Matches(std::string_view(buffer.data() + 1, text.size() - 1), literal)) << text << ": shorter";
  }
}

TEST(LiteralMatch, EveryLengthClassAndEveryByteCounts) {
  ExpectMatchesOnlyItself("");
  ExpectMatchesOnlyItself("X");
  ExpectMatchesOnlyItself("ph");
  ExpectMatchesOnlyItself("cat");
  ExpectMatchesOnlyItself("name");
  ExpectMatchesOnlyItself("block");
  ExpectMatchesOnlyItself("stream");
  ExpectMatchesOnlyItself("context");
  ExpectMatchesOnlyItself("[memory]");
  ExpectMatchesOnlyItself("Input Dims");
  ExpectMatchesOnlyItself("correlation");
  ExpectMatchesOnlyItself("gpuspy work source");  // 18: two words and a partial
  ExpectMatchesOnlyItself("deviceProperties");    // 16: two whole words
}

}  // namespace
}  // namespace gpuspy::importers
