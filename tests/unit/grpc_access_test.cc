// GrpcAccess: the facts gpuspyd's gRPC services decide access on (the bearer token a call
// presents, its transport), the decision for each permission, and a uid-bound caller limited to
// the jobs whose processes all belong to its uid.
#include "collector/auth/grpc_access.h"

#include <gtest/gtest.h>
#include <grpcpp/test/server_context_test_spouse.h>

#include "collector/auth/access_tokens.h"
#include "collector/ingest/batch_ingestor.h"
#include "collector/storage/dictionary_cache.h"
#include "tests/support/subprocess.h"

namespace gpuspy::collector {
namespace {

constexpr char kIngestToken[] = "ingest-token-0123456789";
constexpr char kControlToken[] = "control-token-0123456789";

class GrpcAccessTest : public ::testing::Test {
 protected:
  GrpcAccessTest() {
    tokens_ = *AccessTokens::FromValues(kIngestToken, kControlToken);
    EmbeddedStoreOptions o;
    o.data_dir = dir_.path() + "/store";
    store_ = *OpenEmbeddedStore(o);
  }
  GrpcAccess Access() {
    return GrpcAccess(AccessConfig{.tokens = &tokens_, .owner_uid = 1000}, store_.get(), "",
                      &port_);
  }
  // A call presenting `authorization` (none when empty). No peer: a TCP caller from beyond
  // loopback, where only a token gets in.
  absl::StatusOr<Principal> Call(const std::string& authorization, Permission needed) {
    grpc::ServerContext context;
    grpc::testing::ServerContextTestSpouse spouse(&context);
    if (!authorization.empty()) spouse.AddClientMetadata("authorization", authorization);
    return Access().Authorize(context, needed);
  }
  void AddProcess(const std::string& job, const std::string& key, uint32_t uid) {
    DictionaryCache dictionaries(store_.get());
    IngestCounters counters;
    BatchIngestor ingestor(store_.get(), &dictionaries, &counters, analysis::StepSegmenter());
    v1::ProcessIdentity id;
    id.set_process_key(key);
    id.set_job_id(job);
    id.set_uid(uid);
    ASSERT_TRUE(ingestor.Hello(id, 1).ok());
  }

  testing::TempDir dir_;
  AccessTokens tokens_;
  std::unique_ptr<Store> store_;
  int port_ = 0;
};

TEST_F(GrpcAccessTest, TheBearerTokenIsReadFromTheAuthorizationHeader) {
  grpc::ServerContext context;
  grpc::testing::ServerContextTestSpouse spouse(&context);
  EXPECT_EQ(Access().Facts(context).bearer, "");
  spouse.AddClientMetadata("authorization", std::string("Bearer ") + kIngestToken);
  const CallFacts facts = Access().Facts(context);
  EXPECT_EQ(facts.bearer, kIngestToken);
  EXPECT_EQ(facts.transport, CallFacts::Transport::kTcp);
  EXPECT_FALSE(facts.loopback);
}

TEST_F(GrpcAccessTest, AMalformedHeaderIsAWrongTokenNotAMissingOne) {
  grpc::ServerContext context;
  grpc::testing::ServerContextTestSpouse spouse(&context);
  spouse.AddClientMetadata("authorization", "Basic dXNlcjpwYXNz");
  EXPECT_FALSE(Access().Facts(context).bearer.empty());
}

TEST_F(GrpcAccessTest, EachTokenGrantsItsRoleAndNothingElse) {
  const std::string ingest = std::string("Bearer ") + kIngestToken;
  const std::string control = std::string("Bearer ") + kControlToken;
  EXPECT_TRUE(Call(ingest, Permission::kIngest).ok());
  EXPECT_TRUE(Call(ingest, Permission::kQuery).ok());
  EXPECT_EQ(Call(ingest, Permission::kControl).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(Call(control, Permission::kControl).ok());
  EXPECT_EQ(Call("", Permission::kQuery).status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(Call("Bearer wrong-token-0123456789", Permission::kQuery).status().code(),
            absl::StatusCode::kUnauthenticated);
}

TEST_F(GrpcAccessTest, AUidBoundCallerSeesOnlyJobsWhoseProcessesAreAllItsOwn) {
  AddProcess("mine", "host:1", 1000);
  AddProcess("shared", "host:2", 1000);
  AddProcess("shared", "host:3", 0);
  Principal user;
  user.query = true;
  user.only_uid = 1000;
  user.who = "uid 1000 (unix socket)";
  GrpcAccess access = Access();
  EXPECT_TRUE(access.CheckJob(user, "mine").ok());
  const absl::Status shared = access.CheckJob(user, "shared");
  EXPECT_EQ(shared.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_NE(shared.message().find("belongs to another user"), std::string::npos) << shared;
  Principal token;  // not bound to a uid
  token.query = true;
  EXPECT_TRUE(access.CheckJob(token, "shared").ok());
}

}  // namespace
}  // namespace gpuspy::collector
