// One HTTP connection as cpp-httplib reads and writes it, with a deadline on reading: a request
// (line, headers and body) must arrive whole by the deadline the server sets, however the client
// paces its bytes. httplib's own stream only bounds each read (5 s), so a client sending a byte
// every 4 s held a connection for ever.
#pragma once

#include <openssl/ssl.h>

#include <chrono>
#include <cstddef>
#include <string>

#include "httplib.h"

namespace gpuspy::collector {

class ConnectionStream : public httplib::Stream {
 public:
  using Clock = std::chrono::steady_clock;

  // `ssl` (may be null: plain TCP) is set up on `fd` already; neither is owned.
  ConnectionStream(int fd, SSL* ssl, std::chrono::milliseconds write_timeout)
      : fd_(fd), ssl_(ssl), write_timeout_(write_timeout) {}

  // Reads past `deadline` fail (-1), which ends the request without an answer.
  void set_read_deadline(Clock::time_point deadline) { deadline_ = deadline; }
  // Whether a byte is ready, or arrives before `until` (false also when the peer closed).
  bool WaitReadable(Clock::time_point until) const;

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  int socket() const override { return fd_; }

 private:
  // Bytes httplib asked for one at a time (it reads the request line and headers byte by byte)
  // come from here, one recv per buffer.
  static constexpr size_t kBufferBytes = 4096;
  ssize_t ReadSome(char* ptr, size_t size);

  const int fd_;
  SSL* const ssl_;
  const std::chrono::milliseconds write_timeout_;
  Clock::time_point deadline_ = Clock::time_point::max();
  char buffer_[kBufferBytes];
  size_t buffered_begin_ = 0;
  size_t buffered_end_ = 0;
};

}  // namespace gpuspy::collector
