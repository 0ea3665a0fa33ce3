// cpp-httplib's server with the bounds gpuspyd needs against slow or abusive clients (issue 22):
// each connection on its own thread (connection_threads.h), admitted only under the caps of a
// ConnectionLimiter, with a deadline for each request to arrive whole (connection_stream.h) and
// for an idle keep-alive connection. Routing, handlers and the pre-routing gate are httplib's.
//
// How: httplib calls the virtual process_and_close_socket(sock) for each accepted connection;
// this class overrides it and serves the connection itself through httplib's process_request,
// which is what httplib's own version does with its stream (whose reads have no deadline).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <utility>

#include "collector/http/connection_limiter.h"
#include "httplib.h"

namespace gpuspy::collector {

struct ConnectionPolicy {
  size_t max_connections = 1024;
  size_t max_connections_per_peer = 64;
  // From accepting a connection (or the first byte of a later request on it) to having read
  // the request's line, headers and body.
  std::chrono::milliseconds request_read_timeout{5000};
  // How long a kept-alive connection may wait for its next request.
  std::chrono::milliseconds idle_timeout{5000};
  std::chrono::milliseconds write_timeout{5000};  // without progress
  size_t max_requests_per_connection = 100;
};

// Called from a handler (or the pre-routing gate): the connection serving this thread's request
// is closed once the response is written, whatever keep-alive would do. For requests whose
// framing cannot be trusted (request_framing.h): the bytes after them are never read.
void CloseConnectionAfterResponse();

// Base: httplib::Server or httplib::SSLServer (instantiated for both in the .cc).
template <typename Base>
class GuardedServer : public Base {
 public:
  template <typename... Args>
  explicit GuardedServer(const ConnectionPolicy& policy, Args&&... args)
      : Base(std::forward<Args>(args)...),
        policy_(policy),
        limiter_(policy.max_connections, policy.max_connections_per_peer) {
    ApplyPolicy();
  }

  // After bind_to_port: httplib listens with a backlog of 5, too short for a burst of clients
  // (those past it wait for a SYN retransmit, 1 s).
  void WidenBacklog();
  // Refuses new connections and shuts the open ones down, then stops the listener.
  void StopAll();
  ConnectionLimiter& limiter() { return limiter_; }

 private:
  void ApplyPolicy();
  bool process_and_close_socket(int sock) override;
  // Serves requests on an admitted connection until it closes, idles out or fails.
  bool Serve(int sock, SSL* ssl);

  const ConnectionPolicy policy_;
  ConnectionLimiter limiter_;
};

}  // namespace gpuspy::collector
