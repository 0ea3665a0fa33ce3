#include "collector/http/request_framing.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace gpuspy::collector {
namespace {

httplib::Request With(std::vector<std::pair<std::string, std::string>> headers) {
  httplib::Request req;
  req.method = "POST";
  for (auto& [name, value] : headers) req.headers.emplace(name, value);
  return req;
}

TEST(RequestFraming, OrdinaryRequestsPass) {
  EXPECT_TRUE(CheckRequestFraming(With({{"Host", "x"}})).ok());
  EXPECT_TRUE(CheckRequestFraming(With({{"Content-Length", "12"}})).ok());
  EXPECT_TRUE(CheckRequestFraming(With({{"Transfer-Encoding", "chunked"}})).ok());
  EXPECT_TRUE(CheckRequestFraming(With({{"transfer-encoding", "Chunked"}})).ok());
}

TEST(RequestFraming, SmugglingShapesAreRefused) {
  const std::vector<std::vector<std::pair<std::string, std::string>>> bad = {
      {{"Transfer-Encoding", "chunked"}, {"Content-Length", "4"}},
      {{"Content-Length", "4"}, {"Content-Length", "40"}},
      {{"Content-Length", "4"}, {"Content-Length", "4"}},
      {{"Content-Length", "four"}},
      {{"Transfer-Encoding ", "chunked"}},
      {{"Transfer-Encoding", "chunked, identity"}},
      {{"Transfer-Encoding", "xchunked"}},
      {{"Transfer-Encoding", "chunked"}, {"Transfer-Encoding", "chunked"}},
  };
  for (const auto& headers : bad) {
    const absl::Status st = CheckRequestFraming(With(headers));
    EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << headers.front().first;
    EXPECT_FALSE(st.message().empty());
  }
}

}  // namespace
}  // namespace gpuspy::collector
