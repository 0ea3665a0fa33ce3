// Who may do what: the decision table of collector/auth/access_policy.h, and the token helpers.
#include "collector/auth/access_policy.h"

#include <gtest/gtest.h>

namespace gpuspy::collector {
namespace {

constexpr uint32_t kOwner = 1000;
const std::string kIngestToken = "ingest-token-0123456789abcdef";
const std::string kControlToken = "control-token-0123456789abcdef";

class AccessPolicyTest : public ::testing::Test {
 protected:
  AccessPolicyTest() : tokens_(*AccessTokens::FromValues(kIngestToken, kControlToken)) {}

  AccessConfig WithTokens() const { return {.tokens = &tokens_, .owner_uid = kOwner, .insecure_allow_remote = false}; }
  AccessConfig WithoutTokens() const { return {.tokens = &none_, .owner_uid = kOwner, .insecure_allow_remote = false}; }

  static CallFacts Tcp(std::string bearer, bool loopback = true, std::optional<uint32_t> uid = std::nullopt) {
    CallFacts f;
    f.transport = CallFacts::Transport::kTcp;
    f.bearer = std::move(bearer);
    f.loopback = loopback;
    f.peer_uid = uid;
    return f;
  }
  static CallFacts Unix(std::optional<uint32_t> uid, std::string bearer = "") {
    CallFacts f;
    f.transport = CallFacts::Transport::kUnix;
    f.peer_uid = uid;
    f.unix_owner_or_root = !uid.has_value();
    f.bearer = std::move(bearer);
    return f;
  }

  AccessTokens tokens_;
  AccessTokens none_;
};

TEST_F(AccessPolicyTest, MissingTokenOverTcpIsUnauthenticatedEvenFromTheOwnerOnLoopback) {
  for (Permission p : {Permission::kIngest, Permission::kQuery, Permission::kControl}) {
    EXPECT_TRUE(absl::IsUnauthenticated(Decide(WithTokens(), Tcp("", true, kOwner), p).status()));
    EXPECT_TRUE(absl::IsUnauthenticated(Decide(WithTokens(), Tcp("", false), p).status()));
  }
}

TEST_F(AccessPolicyTest, WrongTokenIsUnauthenticatedOnEveryTransport) {
  for (Permission p : {Permission::kIngest, Permission::kQuery, Permission::kControl}) {
    EXPECT_TRUE(absl::IsUnauthenticated(Decide(WithTokens(), Tcp("nope-nope-nope-nope"), p).status()));
    EXPECT_TRUE(absl::IsUnauthenticated(Decide(WithTokens(), Unix(kOwner, "nope-nope-nope-nope"), p).status()));
    // A token sent to a daemon that has none is a misconfiguration, not something to ignore.
    EXPECT_TRUE(absl::IsUnauthenticated(Decide(WithoutTokens(), Tcp(kIngestToken, true, kOwner), p).status()));
  }
}

TEST_F(AccessPolicyTest, IngestTokenMayIngestAndQueryButNotAttach) {
  EXPECT_TRUE(Decide(WithTokens(), Tcp(kIngestToken, false), Permission::kIngest).ok());
  absl::StatusOr<Principal> q = Decide(WithTokens(), Tcp(kIngestToken, false), Permission::kQuery);
  ASSERT_TRUE(q.ok());
  EXPECT_FALSE(q->only_uid.has_value());
  absl::Status control = Decide(WithTokens(), Tcp(kIngestToken, false), Permission::kControl).status();
  EXPECT_TRUE(absl::IsPermissionDenied(control)) << control;
  EXPECT_NE(control.message().find("control token"), std::string::npos) << control;
}

TEST_F(AccessPolicyTest, ControlTokenMayAttachAndQueryButNotIngest) {
  EXPECT_TRUE(Decide(WithTokens(), Tcp(kControlToken, false), Permission::kControl).ok());
  EXPECT_TRUE(Decide(WithTokens(), Tcp(kControlToken, false), Permission::kQuery).ok());
  EXPECT_TRUE(absl::IsPermissionDenied(Decide(WithTokens(), Tcp(kControlToken, false), Permission::kIngest).status()));
}

// Deleting and renaming jobs: the control token or a uid (bound to its own jobs by CheckJob),
// never the ingest/query token every producer holds.
TEST_F(AccessPolicyTest, OnlyTheControlTokenOrAUidMayDeleteOrRenameJobs) {
  absl::Status ingest = Decide(WithTokens(), Tcp(kIngestToken, false), Permission::kManage).status();
  EXPECT_TRUE(absl::IsPermissionDenied(ingest)) << ingest;
  EXPECT_NE(ingest.message().find("may not delete or rename jobs"), std::string::npos) << ingest;
  EXPECT_TRUE(Decide(WithTokens(), Tcp(kControlToken, false), Permission::kManage).ok());
  absl::StatusOr<Principal> other = Decide(WithoutTokens(), Unix(kOwner + 1), Permission::kManage);
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(other->only_uid, kOwner + 1);
}

TEST_F(AccessPolicyTest, UnixSocketCallersAreKnownByUidWithOrWithoutTokens) {
  for (const AccessConfig& config : {WithTokens(), WithoutTokens()}) {
    absl::StatusOr<Principal> owner = Decide(config, Unix(kOwner), Permission::kControl);
    ASSERT_TRUE(owner.ok());
    EXPECT_FALSE(owner->only_uid.has_value());
    absl::StatusOr<Principal> root = Decide(config, Unix(0), Permission::kControl);
    ASSERT_TRUE(root.ok());
    EXPECT_FALSE(root->only_uid.has_value());
    // Unnamed sockets were let in only for the owner and root.
    absl::StatusOr<Principal> unnamed = Decide(config, Unix(std::nullopt), Permission::kControl);
    ASSERT_TRUE(unnamed.ok());
    EXPECT_FALSE(unnamed->only_uid.has_value());
    // Another user: everything, but only with its own jobs.
    for (Permission p : {Permission::kIngest, Permission::kQuery, Permission::kControl}) {
      absl::StatusOr<Principal> other = Decide(config, Unix(4242), p);
      ASSERT_TRUE(other.ok());
      EXPECT_EQ(other->only_uid, 4242u);
    }
  }
}

TEST_F(AccessPolicyTest, OnTheUnixSocketATokenAddsToTheUidNeverTakesAway) {
  // The owner with the ingest token in its environment may still attach, as its uid.
  absl::StatusOr<Principal> owner = Decide(WithTokens(), Unix(kOwner, kIngestToken), Permission::kControl);
  ASSERT_TRUE(owner.ok()) << owner.status();
  EXPECT_FALSE(owner->only_uid.has_value());
  // Another uid with the ingest token reads every job (the token's right) ...
  absl::StatusOr<Principal> reader = Decide(WithTokens(), Unix(4242, kIngestToken), Permission::kQuery);
  ASSERT_TRUE(reader.ok());
  EXPECT_FALSE(reader->only_uid.has_value());
  // ... but attaches as its uid: to its own jobs only.
  absl::StatusOr<Principal> attacher = Decide(WithTokens(), Unix(4242, kIngestToken), Permission::kControl);
  ASSERT_TRUE(attacher.ok());
  EXPECT_EQ(attacher->only_uid, 4242u);
  // Over TCP the token is all there is.
  EXPECT_TRUE(absl::IsPermissionDenied(Decide(WithTokens(), Tcp(kIngestToken, true, kOwner), Permission::kControl).status()));
}

TEST_F(AccessPolicyTest, LoopbackTcpWithoutTokensIsKnownByUid) {
  absl::StatusOr<Principal> owner = Decide(WithoutTokens(), Tcp("", true, kOwner), Permission::kControl);
  ASSERT_TRUE(owner.ok());
  EXPECT_FALSE(owner->only_uid.has_value());
  absl::StatusOr<Principal> other = Decide(WithoutTokens(), Tcp("", true, 4242), Permission::kQuery);
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->only_uid, 4242u);
  // The socket table did not say: refused rather than guessed.
  EXPECT_TRUE(absl::IsUnauthenticated(Decide(WithoutTokens(), Tcp("", true), Permission::kQuery).status()));
}

TEST_F(AccessPolicyTest, RemoteWithoutTokensOnlyWithInsecureAllowRemote) {
  EXPECT_TRUE(absl::IsUnauthenticated(Decide(WithoutTokens(), Tcp("", false), Permission::kQuery).status()));
  AccessConfig open = WithoutTokens();
  open.insecure_allow_remote = true;
  absl::StatusOr<Principal> p = Decide(open, Tcp("", false), Permission::kControl);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->only_uid.has_value());
}

TEST(AccessTokensTest, RefusesShortOrIdenticalTokens) {
  EXPECT_TRUE(absl::IsInvalidArgument(AccessTokens::FromValues("short", "").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(AccessTokens::FromValues(kIngestToken, kIngestToken).status()));
  EXPECT_TRUE(AccessTokens::FromValues(kIngestToken, "").ok());
  EXPECT_FALSE(AccessTokens().configured());
}

TEST(AccessTokensTest, MatchesExactlyAndByRole) {
  AccessTokens t = *AccessTokens::FromValues(kIngestToken, kControlToken);
  EXPECT_EQ(t.Match(kIngestToken), TokenRole::kIngest);
  EXPECT_EQ(t.Match(kControlToken), TokenRole::kControl);
  EXPECT_EQ(t.Match(kIngestToken + "x"), TokenRole::kNone);
  EXPECT_EQ(t.Match(kIngestToken.substr(1)), TokenRole::kNone);
  EXPECT_EQ(t.Match(""), TokenRole::kNone);
  AccessTokens only_ingest = *AccessTokens::FromValues(kIngestToken, "");
  EXPECT_EQ(only_ingest.Match(""), TokenRole::kNone);  // an unset control token matches nothing
}

TEST(AccessTokensTest, ParsesBearerHeaders) {
  EXPECT_EQ(BearerToken("Bearer abc"), "abc");
  EXPECT_EQ(BearerToken("bearer  abc "), "abc");
  EXPECT_EQ(BearerToken("Basic abc"), "");
  EXPECT_EQ(BearerToken("Bearer"), "");
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abcd"));
}

}  // namespace
}  // namespace gpuspy::collector
