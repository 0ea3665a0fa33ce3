// Who is on the other end of a unix-socket connection to gpuspyd.
//
// The kernel knows (SO_PEERCRED) but gRPC does not tell a call handler; it tells it the peer's
// socket address. So gpuspy's clients bind their end of the socket, before connecting, to an
// abstract address that names their uid ("gpuspy-uid-1000-<pid>-<random>"), and gpuspyd, when it
// accepts the connection, turns it away unless SO_PEERCRED says the same uid. A handler then reads
// the caller's uid from its peer address (unix-abstract:gpuspy-uid-1000-...), which the check made
// trustworthy. A connection without such a name is accepted only from gpuspyd's own uid and root.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpuspy {

// "gpuspy-uid-<uid>-<pid>-<16 hex digits>".
std::string MakeUnixPeerName(uid_t uid);

// The uid a name produced by MakeUnixPeerName claims; nullopt for any other name.
std::optional<uint32_t> UidFromUnixPeerName(std::string_view name);

// The same for a gRPC peer string ("unix-abstract:<name>").
std::optional<uint32_t> UidFromGrpcPeer(std::string_view peer);

// The name of a unix socket's peer (getpeername), "" when it is unnamed or not a unix socket.
std::string UnixPeerAddressName(int fd);

// Binds the unconnected unix socket `fd` to MakeUnixPeerName(geteuid()) in the abstract
// namespace. Best effort: on failure the socket stays unnamed (and is served only if this is
// gpuspyd's own uid or root).
void BindUnixPeerName(int fd);

}  // namespace gpuspy
