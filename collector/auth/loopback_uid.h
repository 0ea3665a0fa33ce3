// Which local user owns the other end of a loopback TCP connection: the kernel's socket table
// (NETLINK_SOCK_DIAG, as `ss -e` shows it). This is what lets gpuspyd on 127.0.0.1 tell its own
// user's CLI from another user's without a token.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace gpuspy::collector {

// True for 127.0.0.0/8, ::1 and ::ffff:127.x.y.z (addresses without brackets or port).
bool IsLoopbackIp(const std::string& ip);

// The uid owning the TCP socket whose local end is peer_ip:peer_port and whose remote end is
// local_ip:local_port — the client of a connection this process accepted on local_ip:local_port.
// NotFound when no such socket exists (the client is gone, or lives in another network namespace).
absl::StatusOr<uint32_t> LoopbackPeerUid(const std::string& peer_ip, int peer_port,
                                         const std::string& local_ip, int local_port);

// Splits a gRPC peer string ("ipv4:127.0.0.1:5000", "ipv6:[::1]:5000") into ip and port.
bool ParseGrpcTcpPeer(const std::string& peer, std::string* ip, int* port);

}  // namespace gpuspy::collector
