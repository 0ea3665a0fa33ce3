#include "collector/auth/loopback_uid.h"

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace gpuspy::collector {
namespace {

struct Address {
  int family = AF_INET;
  uint32_t words[4] = {0, 0, 0, 0};  // network byte order, as inet_diag_sockid wants
};

bool ParseIp(const std::string& ip, Address* out) {
  in_addr v4;
  if (inet_pton(AF_INET, ip.c_str(), &v4) == 1) {
    out->family = AF_INET;
    out->words[0] = v4.s_addr;
    return true;
  }
  in6_addr v6;
  if (inet_pton(AF_INET6, ip.c_str(), &v6) != 1) return false;
  if (IN6_IS_ADDR_V4MAPPED(&v6)) {  // a v4 client of a dual-stack listener: its socket is AF_INET
    out->family = AF_INET;
    std::memcpy(&out->words[0], &v6.s6_addr[12], 4);
    return true;
  }
  out->family = AF_INET6;
  std::memcpy(out->words, v6.s6_addr, 16);
  return true;
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

bool IsLoopbackIp(const std::string& ip) {
  Address a;
  if (!ParseIp(ip, &a)) return false;
  if (a.family == AF_INET) return (ntohl(a.words[0]) >> 24) == 127;
  static const in6_addr kLoopback = IN6ADDR_LOOPBACK_INIT;
  return std::memcmp(a.words, &kLoopback, 16) == 0;
}

bool ParseGrpcTcpPeer(const std::string& peer, std::string* ip, int* port) {
  std::string rest;
  if (peer.starts_with("ipv4:")) {
    rest = peer.substr(5);
  } else if (peer.starts_with("ipv6:")) {
    rest = peer.substr(5);
  } else {
    return false;
  }
  const size_t colon = rest.rfind(':');
  if (colon == std::string::npos || !absl::SimpleAtoi(rest.substr(colon + 1), port)) return false;
  *ip = rest.substr(0, colon);
  if (ip->size() >= 2 && ip->front() == '[' && ip->back() == ']') *ip = ip->substr(1, ip->size() - 2);
  // gRPC percent-encodes some characters of IPv6 zone ids; loopback addresses carry none.
  return !ip->empty();
}

absl::StatusOr<uint32_t> LoopbackPeerUid(const std::string& peer_ip, int peer_port,
                                         const std::string& local_ip, int local_port) {
  Address peer, local;
  if (!ParseIp(peer_ip, &peer) || !ParseIp(local_ip, &local) || peer.family != local.family) {
    return absl::InvalidArgumentError(absl::StrCat("not a TCP address pair: ", peer_ip, " / ", local_ip));
  }
  Fd sock(socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG));
  if (sock.get() < 0) return absl::UnavailableError(absl::StrCat("sock_diag: ", std::strerror(errno)));

  struct {
    nlmsghdr header;
    inet_diag_req_v2 request;
  } msg{};
  msg.header.nlmsg_len = sizeof(msg);
  msg.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  msg.header.nlmsg_flags = NLM_F_REQUEST;  // one exact socket, not a dump
  msg.request.sdiag_family = static_cast<uint8_t>(peer.family);
  msg.request.sdiag_protocol = IPPROTO_TCP;
  msg.request.idiag_states = ~0u;
  // The client's socket: its own (source) end is the peer address we saw.
  msg.request.id.idiag_sport = htons(static_cast<uint16_t>(peer_port));
  msg.request.id.idiag_dport = htons(static_cast<uint16_t>(local_port));
  std::memcpy(msg.request.id.idiag_src, peer.words, sizeof(peer.words));
  std::memcpy(msg.request.id.idiag_dst, local.words, sizeof(local.words));
  msg.request.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
  msg.request.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (sendto(sock.get(), &msg, sizeof(msg), 0, reinterpret_cast<sockaddr*>(&kernel), sizeof(kernel)) < 0) {
    return absl::UnavailableError(absl::StrCat("sock_diag send: ", std::strerror(errno)));
  }
  alignas(nlmsghdr) char buf[8192];
  const ssize_t n = recv(sock.get(), buf, sizeof(buf), 0);
  if (n < 0) return absl::UnavailableError(absl::StrCat("sock_diag recv: ", std::strerror(errno)));
  auto* h = reinterpret_cast<nlmsghdr*>(buf);
  if (!NLMSG_OK(h, static_cast<unsigned>(n))) return absl::UnavailableError("sock_diag: short answer");
  if (h->nlmsg_type == NLMSG_ERROR) {
    const auto* err = static_cast<const nlmsgerr*>(NLMSG_DATA(h));
    if (err->error == -ENOENT) return absl::NotFoundError("no such loopback connection");
    return absl::UnavailableError(absl::StrCat("sock_diag: ", std::strerror(-err->error)));
  }
  if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || h->nlmsg_len < NLMSG_LENGTH(sizeof(inet_diag_msg))) {
    return absl::UnavailableError("sock_diag: unexpected answer");
  }
  return static_cast<const inet_diag_msg*>(NLMSG_DATA(h))->idiag_uid;
}

}  // namespace gpuspy::collector
