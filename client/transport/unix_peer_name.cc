#include "client/transport/unix_peer_name.h"

#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <atomic>
#include <ctime>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gpuspy {
namespace {

constexpr std::string_view kPrefix = "gpuspy-uid-";
constexpr std::string_view kAbstractPeerPrefix = "unix-abstract:";

}  // namespace

std::string MakeUnixPeerName(uid_t uid) {
  // Unique, not secret: the name is checked against the kernel's word for the uid anyway.
  static std::atomic<uint64_t> counter{0};
  uint64_t suffix = 0;
  if (getrandom(&suffix, sizeof(suffix), GRND_NONBLOCK) != static_cast<ssize_t>(sizeof(suffix))) {
    suffix = static_cast<uint64_t>(time(nullptr)) << 20;
  }
  suffix ^= counter.fetch_add(1, std::memory_order_relaxed);
  return absl::StrFormat("%s%u-%d-%016x", kPrefix, static_cast<unsigned>(uid),
                         static_cast<int>(getpid()), suffix);
}

std::optional<uint32_t> UidFromUnixPeerName(std::string_view name) {
  if (!name.starts_with(kPrefix)) return std::nullopt;
  name.remove_prefix(kPrefix.size());
  const size_t dash = name.find('-');
  if (dash == 0 || dash == std::string_view::npos || dash > 10) return std::nullopt;
  uint64_t uid = 0;
  for (char c : name.substr(0, dash)) {
    if (c < '0' || c > '9') return std::nullopt;
    uid = uid * 10 + static_cast<uint64_t>(c - '0');
  }
  if (uid > UINT32_MAX) return std::nullopt;
  return static_cast<uint32_t>(uid);
}

std::optional<uint32_t> UidFromGrpcPeer(std::string_view peer) {
  if (!peer.starts_with(kAbstractPeerPrefix)) return std::nullopt;
  return UidFromUnixPeerName(peer.substr(kAbstractPeerPrefix.size()));
}

std::string UnixPeerAddressName(int fd) {
  sockaddr_un addr{};
  socklen_t len = sizeof(addr);
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "";
  if (addr.sun_family != AF_UNIX) return "";
  const size_t path_len = len > offsetof(sockaddr_un, sun_path) ? len - offsetof(sockaddr_un, sun_path) : 0;
  if (path_len < 2 || addr.sun_path[0] != '\0') return "";  // unnamed, or a file-system path
  return std::string(addr.sun_path + 1, path_len - 1);
}

void BindUnixPeerName(int fd) {
  int domain = 0;
  socklen_t len = sizeof(domain);
  if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || domain != AF_UNIX) return;
  // Abstract names are per network namespace: two processes (or two containers) may draw the
  // same one. Another draw settles it.
  for (int attempt = 0; attempt < 4; ++attempt) {
    const std::string name = MakeUnixPeerName(geteuid());
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path + 1, name.data(), name.size());
    const auto addr_len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
    if (bind(fd, reinterpret_cast<const sockaddr*>(&addr), addr_len) == 0) return;
    if (errno != EADDRINUSE) return;
  }
}

}  // namespace gpuspy
