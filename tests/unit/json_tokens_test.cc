// JsonTokens: the cursor the Kineto walk reads traces with, over simdjson's stage-1 index.
#include "importers/kineto/json_tokens.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace gpuspy::importers {
namespace {

using simdjson::error_code;

// A document with the padding stage 1 reads past its end.
class Doc {
 public:
  explicit Doc(std::string_view json) : text_(json), len_(json.size()) {
    text_.append(simdjson::SIMDJSON_PADDING, '\0');
  }
  error_code Index(JsonTokens& t) const { return t.Index(text_.data(), len_); }

 private:
  std::string text_;
  size_t len_;
};

// The scalars of a flat array, as Scalar() hands them over ("<c>" for a container, skipped).
std::vector<std::string> Scalars(JsonTokens& t) {
  std::vector<std::string> out;
  const error_code err = t.ForEachItem([&]() -> error_code {
    const JsonScalar value = t.Scalar();
    if (value.error()) return value.error();
    if (value.is_container()) {
      out.push_back("<c>");
      return t.Skip();
    }
    out.emplace_back(value.text());
    return simdjson::SUCCESS;
  });
  EXPECT_EQ(err, simdjson::SUCCESS) << simdjson::error_message(err);
  return out;
}

TEST(JsonTokens, ScalarsAreTheMappingsTextWithTheSpaceAfterThemDropped) {
  JsonTokens t;
  const Doc doc("[ \"X\" ,1695835572943613.592\n, -7 ,\ttrue, false ,null , {\"a\": [1]}, [2, [3]] ,\"\"]");
  ASSERT_EQ(doc.Index(t), simdjson::SUCCESS);
  EXPECT_EQ(Scalars(t), (std::vector<std::string>{"X", "1695835572943613.592", "-7", "true", "false",
                                                   "", "<c>", "<c>", ""}));
  EXPECT_TRUE(t.AtEnd());
}

TEST(JsonTokens, EscapedStringsAreUnescapedAndEarlierOnesStayValid) {
  JsonTokens t;
  const Doc doc(R"({"a\"b": "caf\u00e9", "plain": "x\\y\n", "k": "no escape"})");
  ASSERT_EQ(doc.Index(t), simdjson::SUCCESS);
  std::vector<std::string_view> seen;  // views, checked after the whole object is read
  ASSERT_EQ(t.ForEachField([&](std::string_view key) -> error_code {
              seen.push_back(key);
              const JsonScalar value = t.Scalar();
              if (value.error()) return value.error();
              seen.push_back(value.text());
              return simdjson::SUCCESS;
            }),
            simdjson::SUCCESS);
  EXPECT_EQ(seen, (std::vector<std::string_view>{"a\"b", "caf\xc3\xa9", "plain", "x\\y\n", "k",
                                                  "no escape"}));
}

TEST(JsonTokens, SkipPassesOneWholeValueAndStopsThere) {
  JsonTokens t;
  const Doc doc(R"([{"a": [1, {"b": "]}"}], "c": {}}, 3])");
  ASSERT_EQ(doc.Index(t), simdjson::SUCCESS);
  ASSERT_TRUE(t.Consume('['));
  ASSERT_EQ(t.Skip(), simdjson::SUCCESS);  // brackets inside strings are no tokens
  EXPECT_EQ(t.Peek(), ',');
  ASSERT_TRUE(t.Consume(','));
  ASSERT_EQ(t.Skip(), simdjson::SUCCESS);  // a scalar is one token
  EXPECT_TRUE(t.Consume(']'));
  EXPECT_TRUE(t.AtEnd());
}

struct BadCase {
  const char* json;
  error_code err;
  size_t offset;  // where the cursor stopped: the token it could not take
};

// Each break of the grammar stops the walk at the token that breaks it, with simdjson's word
// for it; an object or array cut short stops at the document's end.
TEST(JsonTokens, BrokenGrammarStopsAtTheTokenThatBreaksIt) {
  const std::vector<BadCase> cases = {
      {R"({"a" 1})", simdjson::TAPE_ERROR, 5},          // no colon
      {R"({"a": 1 "b": 2})", simdjson::TAPE_ERROR, 8},  // no comma
      {R"({"a": 1,})", simdjson::TAPE_ERROR, 8},        // a comma before '}'
      {R"({"a": ,})", simdjson::TAPE_ERROR, 6},         // no value
      {R"({1: 2})", simdjson::TAPE_ERROR, 1},           // a key that is no string
      {R"({"a": tru})", simdjson::T_ATOM_ERROR, 6},
      {R"({"a": nul})", simdjson::N_ATOM_ERROR, 6},
      {R"({"a": falsey})", simdjson::F_ATOM_ERROR, 6},
      {R"({"a": [1, 2)", simdjson::INCOMPLETE_ARRAY_OR_OBJECT, 11},
      {R"({"a": {"b": [1})", simdjson::INCOMPLETE_ARRAY_OR_OBJECT, 15},
  };
  for (const BadCase& c : cases) {
    JsonTokens t;
    const Doc doc(c.json);
    ASSERT_EQ(doc.Index(t), simdjson::SUCCESS) << c.json;
    const error_code err = t.ForEachField([&](std::string_view) -> error_code {
      const JsonScalar value = t.Scalar();
      if (value.error()) return value.error();
      return value.is_container() ? t.Skip() : simdjson::SUCCESS;
    });
    EXPECT_EQ(err, c.err) << c.json << ": " << simdjson::error_message(err);
    EXPECT_EQ(t.Offset(), c.offset) << c.json;
  }
}

TEST(JsonTokens, StageOneRefusesUnclosedStringsAndBadUtf8) {
  JsonTokens t;
  EXPECT_EQ(Doc(R"({"a": "open})").Index(t), simdjson::UNCLOSED_STRING);
  EXPECT_EQ(Doc("{\"a\": \"\xff\xfe\"}").Index(t), simdjson::UTF8_ERROR);
  // And a bad escape, found when the string is read.
  const Doc bad_escape(R"(["\q"])");  // the text must outlive the walk
  ASSERT_EQ(bad_escape.Index(t), simdjson::SUCCESS);
  ASSERT_TRUE(t.Consume('['));
  EXPECT_EQ(t.String().error(), simdjson::STRING_ERROR);
}

TEST(JsonTokens, ALongerDocumentGrowsTheIndex) {
  JsonTokens t;
  ASSERT_EQ(t.Reserve(16), simdjson::SUCCESS);
  std::string json = "[";
  for (int i = 0; i < 5000; ++i) json += (i == 0 ? "" : ",") + std::to_string(i);
  json += "]";
  const Doc doc(json);
  ASSERT_EQ(doc.Index(t), simdjson::SUCCESS);
  const std::vector<std::string> items = Scalars(t);
  ASSERT_EQ(items.size(), 5000u);
  EXPECT_EQ(items.back(), "4999");
}

}  // namespace
}  // namespace gpuspy::importers
