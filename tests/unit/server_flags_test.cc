// gpuspyd's command line (collector/server/server_flags.h): CLI11 with gpuspyd's flags, then the
// checks and conversions FinishServerFlags adds.
#include "collector/server/server_flags.h"

#include <gtest/gtest.h>

#include <vector>

namespace gpuspy::collector {
namespace {

// Parses `args` as gpuspyd would; the error message, or "" when accepted.
std::string Parse(std::vector<std::string> args, ServerFlags* flags) {
  CLI::App app{"gpuspyd"};
  AddServerFlags(app, flags);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  absl::Status st = FinishServerFlags(flags);
  return st.ok() ? "" : std::string(st.message());
}

TEST(ServerFlags, DefaultsAreAStandaloneLoopbackCollector) {
  ServerFlags f = DefaultServerFlags();
  ASSERT_EQ(Parse({}, &f), "");
  EXPECT_EQ(f.options.role, "standalone");
  EXPECT_EQ(f.options.listen, "127.0.0.1:7070");
  EXPECT_EQ(f.options.retention_age, absl::Hours(24 * 7));
  EXPECT_TRUE(f.options.compress_segments);
  EXPECT_FALSE(f.options.fsync_each_batch);
  EXPECT_FALSE(f.options.unix_socket.empty());
}

TEST(ServerFlags, RebuildIndexIsForTheEmbeddedStoreOnly) {
  ServerFlags f = DefaultServerFlags();
  ASSERT_EQ(Parse({"--rebuild-index", "--data-dir", "/d"}, &f), "");
  EXPECT_TRUE(f.rebuild_index);
  ServerFlags pg = DefaultServerFlags();
  EXPECT_EQ(Parse({"--rebuild-index", "--postgres", "host=db"}, &pg),
            "--rebuild-index applies to --data-dir, not --postgres");
}

TEST(ServerFlags, TextualFlagsBecomeOptions) {
  ServerFlags f = DefaultServerFlags();
  ASSERT_EQ(Parse({"--role", "node", "--forward-to", "hub:7070", "--retention-age", "12h",
                   "--fsync", "batch", "--compress", "none"}, &f), "");
  EXPECT_EQ(f.options.forward_to, "hub:7070");
  EXPECT_EQ(f.options.retention_age, absl::Hours(12));
  EXPECT_TRUE(f.options.fsync_each_batch);
  EXPECT_FALSE(f.options.compress_segments);
}

TEST(ServerFlags, NodeAndForwardToGoTogether) {
  ServerFlags node = DefaultServerFlags();
  EXPECT_NE(Parse({"--role", "node"}, &node).find("--forward-to"), std::string::npos);
  ServerFlags hub = DefaultServerFlags();
  EXPECT_NE(Parse({"--role", "hub", "--forward-to", "x:1"}, &hub).find("only a node forwards"),
            std::string::npos);
}

TEST(ServerFlags, CliChecksRefuseOutOfRangeValues) {
  ServerFlags f = DefaultServerFlags();
  EXPECT_NE(Parse({"--segment-bytes", "100"}, &f), "");
  ServerFlags g = DefaultServerFlags();
  EXPECT_NE(Parse({"--role", "leader"}, &g), "");
}

TEST(ServerFlags, RetentionAgeForms) {
  EXPECT_EQ(*ParseRetentionAge("7d"), absl::Hours(24 * 7));
  EXPECT_EQ(*ParseRetentionAge("0"), absl::ZeroDuration());
  EXPECT_EQ(*ParseRetentionAge("1h30m"), absl::Minutes(90));
  for (const char* bad : {"", "d", "-1d", "forever", "1.5d", "99999999999d"}) {
    EXPECT_FALSE(ParseRetentionAge(bad).ok()) << bad;
  }
}

// A negative age made every segment look older than the limit: the retention loop would have
// evicted everything it stored, seconds after storing it.
TEST(ServerFlags, NegativeRetentionAgeIsRefused) {
  EXPECT_FALSE(ParseRetentionAge("-3h").ok());
  ServerFlags f = DefaultServerFlags();
  EXPECT_NE(Parse({"--retention-age", "-1s"}, &f).find("--retention-age"), std::string::npos);
}

TEST(ServerFlags, RetentionIntervalAndHttpBounds) {
  ServerFlags f = DefaultServerFlags();
  ASSERT_EQ(Parse({}, &f), "");
  EXPECT_EQ(f.options.retention_interval, absl::Seconds(30));
  EXPECT_EQ(f.options.http_max_connections, 1024u);
  EXPECT_EQ(f.options.http_max_connections_per_peer, 64u);
  EXPECT_EQ(f.options.http_request_timeout_ms, 5000);
  f = DefaultServerFlags();
  ASSERT_EQ(Parse({"--retention-interval", "5m", "--http-max-connections", "10",
                   "--http-max-connections-per-peer", "2", "--http-request-timeout-ms", "700"},
                  &f),
            "");
  EXPECT_EQ(f.options.retention_interval, absl::Minutes(5));
  EXPECT_EQ(f.options.http_max_connections, 10u);
  EXPECT_EQ(f.options.http_max_connections_per_peer, 2u);
  EXPECT_EQ(f.options.http_request_timeout_ms, 700);
  for (const char* bad : {"0", "-1s", "soon"}) {
    f = DefaultServerFlags();
    EXPECT_NE(Parse({"--retention-interval", bad}, &f).find("--retention-interval"),
              std::string::npos)
        << bad;
  }
}

}  // namespace
}  // namespace gpuspy::collector
