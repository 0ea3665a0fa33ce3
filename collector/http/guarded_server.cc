#include "collector/http/guarded_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <type_traits>

#include "collector/http/connection_stream.h"
#include "collector/http/connection_threads.h"

namespace gpuspy::collector {
namespace {

using Clock = ConnectionStream::Clock;

// A connection is served on one thread from accept to close (Serve), handlers included.
thread_local bool close_after_response = false;

// The peer's IP address, the unit of the per-peer cap ("" if it cannot be told: one shared bucket).
std::string PeerAddress(int sock) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (getpeername(sock, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "";
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&addr)->sin_addr, text, sizeof(text));
  } else if (addr.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_addr, text,
              sizeof(text));
  }
  return text;
}

// What the handshake of a TLS connection needs, and nothing for plain TCP.
template <typename Base>
SSL* StartTls(Base& server, int sock, Clock::time_point deadline) {
  if constexpr (std::is_base_of_v<httplib::SSLServer, Base>) {
    ConnectionStream probe(sock, nullptr, std::chrono::milliseconds(0));
    if (!probe.WaitReadable(deadline)) return nullptr;  // no ClientHello in time
    SSL* ssl = SSL_new(server.ssl_context());
    if (ssl == nullptr) return nullptr;
    SSL_set_fd(ssl, sock);
    if (SSL_accept(ssl) != 1) {
      SSL_free(ssl);
      return nullptr;
    }
    return ssl;
  } else {
    (void)server;
    (void)sock;
    (void)deadline;
    return nullptr;
  }
}

}  // namespace

void CloseConnectionAfterResponse() { close_after_response = true; }

template <typename Base>
void GuardedServer<Base>::ApplyPolicy() {
  // The read timeout is what httplib puts on accepted sockets (SO_RCVTIMEO); only blocking TLS
  // reads depend on it.
  Base::set_read_timeout(policy_.request_read_timeout);
  Base::set_write_timeout(policy_.write_timeout);
  // Only for the Keep-Alive header httplib writes: Serve() applies both bounds itself.
  Base::set_keep_alive_max_count(policy_.max_requests_per_connection);
  Base::set_keep_alive_timeout(
      std::chrono::duration_cast<std::chrono::seconds>(policy_.idle_timeout).count());
  const size_t max_threads = policy_.max_connections + 64;  // refusals also pass through a thread
  Base::new_task_queue = [max_threads] { return new ConnectionThreads(max_threads); };
}

template <typename Base>
void GuardedServer<Base>::WidenBacklog() {
  if (Base::svr_sock_ != INVALID_SOCKET) listen(Base::svr_sock_, SOMAXCONN);
}

template <typename Base>
void GuardedServer<Base>::StopAll() {
  limiter_.Close();
  Base::stop();
}

template <typename Base>
bool GuardedServer<Base>::process_and_close_socket(int sock) {
  const Clock::time_point accepted = Clock::now();
  const std::string peer = PeerAddress(sock);
  if (!limiter_.Admit(peer, sock)) {
    close(sock);
    return false;
  }
  bool ok = false;
  SSL* ssl = nullptr;
  const bool tls = std::is_base_of_v<httplib::SSLServer, Base>;
  if (!tls || (ssl = StartTls(*this, sock, accepted + policy_.request_read_timeout)) != nullptr) {
    ok = Serve(sock, ssl);
  }
  if (ssl != nullptr) {
    SSL_shutdown(ssl);
    SSL_free(ssl);
  }
  limiter_.Release(peer, sock);
  shutdown(sock, SHUT_RDWR);
  close(sock);
  return ok;
}

template <typename Base>
bool GuardedServer<Base>::Serve(int sock, SSL* ssl) {
  ConnectionStream stream(sock, ssl, policy_.write_timeout);
  Clock::time_point deadline = Clock::now() + policy_.request_read_timeout;
  for (size_t served = 0; served < policy_.max_requests_per_connection; ++served) {
    if (served > 0) {
      if (!stream.WaitReadable(Clock::now() + policy_.idle_timeout)) return true;
      deadline = Clock::now() + policy_.request_read_timeout;
    }
    stream.set_read_deadline(deadline);
    const bool last = served + 1 == policy_.max_requests_per_connection || limiter_.closing();
    bool closed = false;
    close_after_response = false;
    if (!Base::process_request(stream, last, closed, nullptr)) return false;
    if (closed || close_after_response) return true;
  }
  return true;
}

template class GuardedServer<httplib::Server>;
template class GuardedServer<httplib::SSLServer>;

}  // namespace gpuspy::collector
