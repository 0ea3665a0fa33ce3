// A C++ callback on every socket gRPC creates (gRPC's socket mutator, GRPC_ARG_SOCKET_MUTATOR).
// The collector uses it to read a unix-socket peer's credentials (SO_PEERCRED) as each connection
// is accepted; clients use it to give their unix-socket end a name that says who they are
// (unix_peer_name.h). gRPC's C++ API exposes neither.
#pragma once

#include <functional>

#include "grpcpp/server_builder.h"
#include "grpcpp/support/channel_arguments.h"

namespace gpuspy {

enum class SocketUse {
  kClientConnection,  // before connect()
  kServerListener,    // before listen()
  kServerConnection,  // just accepted, before gRPC reads from it
};

// Must not block for long: it runs on gRPC's polling threads. It cannot refuse a socket by
// returning an error: for an accepted connection gRPC would close its listener too (1.51). To turn
// a connection away, shutdown(fd, SHUT_RDWR): gRPC then sees it closed, the client gets
// UNAVAILABLE, and the listener keeps accepting.
using SocketHook = std::function<void(int fd, SocketUse use)>;

// Installs `hook` in `args` (replacing any earlier one).
void SetSocketHook(grpc::ChannelArguments* args, SocketHook hook);

// The same for a server: ServerBuilder::SetOption(SocketHookOption(hook)).
std::unique_ptr<grpc::ServerBuilderOption> SocketHookOption(SocketHook hook);

}  // namespace gpuspy
