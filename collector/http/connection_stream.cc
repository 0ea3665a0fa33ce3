#include "collector/http/connection_stream.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace gpuspy::collector {
namespace {

// Waits for `events` on `fd` until `until`; false on timeout, error or a closed peer without data.
bool PollUntil(int fd, short events, ConnectionStream::Clock::time_point until) {
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(
        until - ConnectionStream::Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, events, 0};
    const int n = poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1 << 30)));
    if (n > 0) return (p.revents & (events | POLLHUP)) != 0;  // a hangup reads as EOF
    if (n == 0) return false;
    if (errno != EINTR) return false;
  }
}

void AddressOf(const sockaddr_storage& addr, std::string& ip, int& port) {
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &a->sin_addr, text, sizeof(text));
    port = ntohs(a->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof(text));
    port = ntohs(a->sin6_port);
  }
  ip = text;
}

}  // namespace

bool ConnectionStream::WaitReadable(Clock::time_point until) const {
  if (buffered_end_ > buffered_begin_) return true;
  if (ssl_ != nullptr && SSL_pending(ssl_) > 0) return true;
  return PollUntil(fd_, POLLIN, until);
}

bool ConnectionStream::is_readable() const { return WaitReadable(deadline_); }

bool ConnectionStream::is_writable() const {
  return PollUntil(fd_, POLLOUT, Clock::now() + write_timeout_);
}

ssize_t ConnectionStream::ReadSome(char* ptr, size_t size) {
  if (!is_readable()) return -1;
  if (ssl_ != nullptr) {
    // The socket is blocking with SO_RCVTIMEO (httplib sets it at accept to the header
    // deadline), which bounds a TLS record that arrives in pieces.
    const int n = SSL_read(ssl_, ptr, static_cast<int>(std::min<size_t>(size, 1 << 30)));
    return n > 0 ? n : (SSL_get_error(ssl_, n) == SSL_ERROR_ZERO_RETURN ? 0 : -1);
  }
  for (;;) {
    const ssize_t n = recv(fd_, ptr, size, 0);
    if (n >= 0 || errno != EINTR) return n;
  }
}

ssize_t ConnectionStream::read(char* ptr, size_t size) {
  if (buffered_end_ == buffered_begin_ && size < kBufferBytes) {
    const ssize_t n = ReadSome(buffer_, kBufferBytes);
    if (n <= 0) return n;
    buffered_begin_ = 0;
    buffered_end_ = static_cast<size_t>(n);
  }
  if (buffered_end_ > buffered_begin_) {
    const size_t n = std::min(size, buffered_end_ - buffered_begin_);
    std::memcpy(ptr, buffer_ + buffered_begin_, n);
    buffered_begin_ += n;
    return static_cast<ssize_t>(n);
  }
  return ReadSome(ptr, size);
}

ssize_t ConnectionStream::write(const char* ptr, size_t size) {
  if (!is_writable()) return -1;
  if (ssl_ != nullptr) {
    const int n = SSL_write(ssl_, ptr, static_cast<int>(std::min<size_t>(size, 1 << 30)));
    return n > 0 ? n : -1;
  }
  for (;;) {
    // MSG_NOSIGNAL: a client that went away is an error here, not a SIGPIPE for the daemon.
    const ssize_t n = send(fd_, ptr, size, MSG_NOSIGNAL);
    if (n >= 0 || errno != EINTR) return n;
  }
}

void ConnectionStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (getpeername(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) AddressOf(addr, ip, port);
}

void ConnectionStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) AddressOf(addr, ip, port);
}

}  // namespace gpuspy::collector
