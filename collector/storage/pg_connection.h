// The one place libpq is used: a connection with its session setup, reconnect, a per-connection
// prepared-statement cache, typed parameters and results, and SQLSTATE -> absl::Status mapping.
// Not thread-safe: one thread at a time (PgPool hands connections out).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

struct pg_conn;
struct pg_result;

namespace gpuspy::collector {

// Parameters sent with explicit types: integers as text, strings and bytes in binary form (no
// escaping, no NUL truncation: a string with a NUL byte is refused by the server, not cut).
class PgParams {
 public:
  PgParams() = default;
  PgParams(const PgParams&) = delete;  // values_ points into owned_
  PgParams& operator=(const PgParams&) = delete;
  PgParams& Int(int64_t v);
  PgParams& Bool(bool v);
  PgParams& Text(std::string_view v);
  PgParams& Bytes(std::string_view v);  // bytea
  PgParams& IntArray(const std::vector<int64_t>& v);       // bigint[]
  PgParams& TextArray(const std::vector<std::string>& v);  // text[]
  size_t size() const { return types_.size(); }

 private:
  friend class PgConnection;
  std::deque<std::string> owned_;       // text-form integers
  std::vector<const char*> values_;
  std::vector<int> lengths_;
  std::vector<int> formats_;
  std::vector<unsigned int> types_;     // Oids
};

// A result in binary form. Columns are read by type: Int (int2/int4/int8/bool), Bytes (bytea, text).
class PgResult {
 public:
  explicit PgResult(pg_result* r) : r_(r) {}
  PgResult(PgResult&& o) noexcept : r_(o.r_) { o.r_ = nullptr; }
  PgResult& operator=(PgResult&& o) noexcept;
  ~PgResult();
  int rows() const;
  int columns() const;
  bool IsNull(int row, int col) const;
  int64_t Int(int row, int col) const;
  std::string_view Bytes(int row, int col) const;

 private:
  pg_result* r_;
};

struct PgConnectOptions {
  std::string conninfo;         // libpq key=value string or postgres:// URI
  int connect_timeout_s = 10;   // unless the conninfo sets connect_timeout itself
  // Statements run after every (re)connect, e.g. SET search_path; their failure fails the connect.
  std::vector<std::string> session_setup;
  // Called after session_setup on every (re)connect (the batch writer re-takes its lock here).
  std::function<absl::Status(class PgConnection&)> on_connect;
};

class PgConnection {
 public:
  // Connects; errors name the server (host, port, database, user; never the password).
  static absl::StatusOr<std::unique_ptr<PgConnection>> Connect(PgConnectOptions options);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Simple-protocol statement(s) without parameters or results (DDL, BEGIN/COMMIT, SET).
  absl::Status Run(const std::string& sql);
  // One parameterized statement, prepared once per connection and reused; binary results.
  absl::StatusOr<PgResult> Query(const std::string& sql, const PgParams& params = PgParams());
  // Makes sure the connection is usable, reconnecting once if the server dropped it.
  absl::Status EnsureConnected();
  // "host=... port=... dbname=... user=...": for messages.
  const std::string& where() const { return where_; }

 private:
  explicit PgConnection(PgConnectOptions options) : options_(std::move(options)) {}
  absl::Status Open();
  absl::Status SetUpSession();
  absl::Status ErrorFrom(pg_result* r, std::string_view what, std::string_view sql);

  PgConnectOptions options_;
  pg_conn* conn_ = nullptr;
  std::string where_;
  std::map<std::string, std::string> prepared_;  // sql -> statement name
  bool in_transaction_ = false;  // as of the last statement; a lost connection is not reopened
                                 // silently in the middle of a transaction
};

// "name" with embedded quotes doubled: an identifier (schema, table) for SQL text.
std::string PgQuoteIdentifier(std::string_view name);

// Maps a SQLSTATE (5 chars) to the closest absl code: connection loss -> Unavailable, disk full ->
// ResourceExhausted, unique violation -> AlreadyExists, bad data -> InvalidArgument, ...
absl::StatusCode StatusCodeForSqlState(std::string_view sqlstate);

// Host, port, database and user a conninfo names (libpq defaults where it names none), or an
// InvalidArgument error when libpq cannot parse it.
absl::StatusOr<std::string> DescribeConninfo(const std::string& conninfo);

}  // namespace gpuspy::collector
