// Unix-socket peer names: what gpuspy's clients bind to, and what the collector believes.
#include "client/transport/unix_peer_name.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

namespace gpuspy {
namespace {

TEST(UnixPeerNameTest, NamesCarryTheUid) {
  EXPECT_EQ(UidFromUnixPeerName(MakeUnixPeerName(1000)), 1000u);
  EXPECT_EQ(UidFromUnixPeerName(MakeUnixPeerName(0)), 0u);
  EXPECT_EQ(UidFromUnixPeerName(MakeUnixPeerName(4294967294u)), 4294967294u);
  EXPECT_NE(MakeUnixPeerName(7), MakeUnixPeerName(7));  // two sockets never collide
}

TEST(UnixPeerNameTest, AnythingElseClaimsNoUid) {
  for (const char* name : {"", "gpuspy-uid-", "gpuspy-uid-5", "gpuspy-uid--5-1-a", "gpuspy-uid-+5-1-a",
                           "gpuspy-uid- 5-1-a", "gpuspy-uid-99999999999-1-a", "gpuspy-uid-0x5-1-a",
                           "xgpuspy-uid-5-1-a", "gpuspy-UID-5-1-a"}) {
    EXPECT_FALSE(UidFromUnixPeerName(name).has_value()) << name;
  }
}

TEST(UnixPeerNameTest, ReadsGrpcPeerStrings) {
  EXPECT_EQ(UidFromGrpcPeer("unix-abstract:gpuspy-uid-7-12-00ff"), 7u);
  EXPECT_FALSE(UidFromGrpcPeer("unix:").has_value());
  EXPECT_FALSE(UidFromGrpcPeer("unix:/tmp/gpuspy-uid-7-12-00ff").has_value());
  EXPECT_FALSE(UidFromGrpcPeer("ipv4:127.0.0.1:5000").has_value());
}

TEST(UnixPeerNameTest, TheAcceptingSideSeesTheBoundName) {
  const int listener = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string name = "gpuspy-unit-test-" + std::to_string(getpid());
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), len), 0);
  ASSERT_EQ(listen(listener, 4), 0);

  const int named = socket(AF_UNIX, SOCK_STREAM, 0);
  BindUnixPeerName(named);
  ASSERT_EQ(connect(named, reinterpret_cast<sockaddr*>(&addr), len), 0);
  const int accepted = accept(listener, nullptr, nullptr);
  ASSERT_GE(accepted, 0);
  EXPECT_EQ(UidFromUnixPeerName(UnixPeerAddressName(accepted)), static_cast<uint32_t>(geteuid()));

  const int unnamed = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_EQ(connect(unnamed, reinterpret_cast<sockaddr*>(&addr), len), 0);
  const int accepted2 = accept(listener, nullptr, nullptr);
  EXPECT_EQ(UnixPeerAddressName(accepted2), "");

  const int tcp = socket(AF_INET, SOCK_STREAM, 0);
  BindUnixPeerName(tcp);  // not a unix socket: left alone
  sockaddr_in local{};
  socklen_t local_len = sizeof(local);
  ASSERT_EQ(getsockname(tcp, reinterpret_cast<sockaddr*>(&local), &local_len), 0);
  EXPECT_EQ(local.sin_port, 0);
  for (int fd : {listener, named, accepted, unnamed, accepted2, tcp}) close(fd);
}

}  // namespace
}  // namespace gpuspy
