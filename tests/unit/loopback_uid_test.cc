// The uid behind a loopback TCP connection, from the kernel's socket table.
#include "collector/auth/loopback_uid.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace gpuspy::collector {
namespace {

class LoopbackUidTest : public ::testing::Test {
 protected:
  void SetUp() override {
    listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(listener_, 0);
    addr_.sin_family = AF_INET;
    addr_.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&addr_), sizeof(addr_)), 0);
    ASSERT_EQ(listen(listener_, 4), 0);
    socklen_t len = sizeof(addr_);
    ASSERT_EQ(getsockname(listener_, reinterpret_cast<sockaddr*>(&addr_), &len), 0);
  }
  void TearDown() override { close(listener_); }

  // Accepts one connection and looks up its peer's uid (and, for contrast, a port off by one).
  void AcceptAndLookUp(absl::StatusOr<uint32_t>* uid, absl::StatusOr<uint32_t>* wrong_port) {
    sockaddr_in peer{};
    socklen_t len = sizeof(peer);
    const int fd = accept(listener_, reinterpret_cast<sockaddr*>(&peer), &len);
    ASSERT_GE(fd, 0);
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &peer.sin_addr, ip, sizeof(ip));
    const int local_port = ntohs(addr_.sin_port);
    *uid = LoopbackPeerUid(ip, ntohs(peer.sin_port), "127.0.0.1", local_port);
    *wrong_port = LoopbackPeerUid(ip, ntohs(peer.sin_port) + 1, "127.0.0.1", local_port);
    close(fd);
  }

  int listener_ = -1;
  sockaddr_in addr_{};
};

TEST_F(LoopbackUidTest, FindsOwnUid) {
  const int client = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&addr_), sizeof(addr_)), 0);
  absl::StatusOr<uint32_t> uid = absl::UnknownError(""), wrong = absl::UnknownError("");
  AcceptAndLookUp(&uid, &wrong);
  ASSERT_TRUE(uid.ok()) << uid.status();
  EXPECT_EQ(*uid, geteuid());
  EXPECT_TRUE(absl::IsNotFound(wrong.status())) << wrong.status();
  close(client);
}

TEST_F(LoopbackUidTest, FindsAnotherUsersUid) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to connect as another user";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(1);
    const int c = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(c, reinterpret_cast<sockaddr*>(&addr_), sizeof(addr_)) != 0) _exit(2);
    char b;
    (void)read(c, &b, 1);  // until the parent has looked
    _exit(0);
  }
  absl::StatusOr<uint32_t> uid = absl::UnknownError(""), wrong = absl::UnknownError("");
  AcceptAndLookUp(&uid, &wrong);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(uid.ok()) << uid.status();
  EXPECT_EQ(*uid, 65534u);
}

TEST(LoopbackAddressTest, RecognisesLoopback) {
  for (const char* ip : {"127.0.0.1", "127.9.8.7", "::1", "::ffff:127.0.0.1"}) EXPECT_TRUE(IsLoopbackIp(ip)) << ip;
  for (const char* ip : {"10.0.0.1", "0.0.0.0", "::", "::ffff:10.0.0.1", "localhost", ""}) {
    EXPECT_FALSE(IsLoopbackIp(ip)) << ip;
  }
}

TEST(LoopbackAddressTest, ParsesGrpcPeers) {
  std::string ip;
  int port = 0;
  ASSERT_TRUE(ParseGrpcTcpPeer("ipv4:127.0.0.1:5000", &ip, &port));
  EXPECT_EQ(ip, "127.0.0.1");
  EXPECT_EQ(port, 5000);
  ASSERT_TRUE(ParseGrpcTcpPeer("ipv6:[::1]:6000", &ip, &port));
  EXPECT_EQ(ip, "::1");
  EXPECT_EQ(port, 6000);
  EXPECT_FALSE(ParseGrpcTcpPeer("unix:/tmp/x", &ip, &port));
  EXPECT_FALSE(ParseGrpcTcpPeer("ipv4:127.0.0.1", &ip, &port));
}

}  // namespace
}  // namespace gpuspy::collector
