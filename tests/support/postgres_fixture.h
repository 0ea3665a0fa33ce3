// A throwaway PostgreSQL server for tests: initdb into a temp dir, the postmaster on a unix socket
// only (listen_addresses=''), a fresh database per test, stopped and removed at the end.
//
// PostgreSQL refuses to run as root; as root the server runs as `nobody` (its dirs chowned to it).
// The postmaster is a child of the test process with a parent-death signal, so a crashed or killed
// test binary leaves no server behind.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace gpuspy::testing {

struct PostgresServerOptions {
  // Test servers run with fsync=off (the tests are about semantics, not power loss); benchmarks
  // want the server's real durability.
  bool durable = false;
  // Outlive this process (no parent-death signal, own session): for a server shared by several
  // test processes (tests/support/postgres_test_server_main.cc).
  bool detach = false;
};

class PostgresServer {
 public:
  // The directory with initdb and postgres: $GPUSPY_POSTGRES_BIN, the newest
  // /usr/lib/postgresql/<version>/bin, or PATH. "" when PostgreSQL is not installed.
  static std::string FindBinDir();

  // Starts a new server; nullptr with *error on failure.
  static std::unique_ptr<PostgresServer> Start(const PostgresServerOptions& options,
                                               std::string* error);
  // A server started elsewhere, reached with `base_conninfo` ("host=... port=... user=...").
  static std::unique_ptr<PostgresServer> Attach(const std::string& base_conninfo);

  ~PostgresServer();  // stops a server this object started (unless detached) and removes its dir
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // Fast shutdown / start again on the same data and socket (servers this object started).
  bool Stop(std::string* error);
  bool Restart(std::string* error);

  // "host=<socket dir> port=<port> user=gpuspy" (+ " dbname=<db>").
  const std::string& base_conninfo() const { return base_conninfo_; }
  std::string Conninfo(const std::string& dbname) const;
  // CREATE DATABASE with a name unique to this process and call; returns the database name.
  std::string CreateDatabase(std::string* error);
  // DROP DATABASE ... WITH (FORCE); errors are ignored (the server is throwaway).
  void DropDatabase(const std::string& dbname);
  // Runs one SQL statement against `dbname`; "" on success, else the error.
  std::string Exec(const std::string& dbname, const std::string& sql);
  // The first column of the first row of `sql`, as text ("" on error or no row).
  std::string QueryValue(const std::string& dbname, const std::string& sql);

  const std::string& dir() const { return dir_; }
  pid_t pid() const { return pid_; }
  int port() const { return port_; }

 private:
  PostgresServer() = default;
  bool Launch(std::string* error);

  PostgresServerOptions options_;
  std::string bin_dir_;
  std::string dir_;  // temp dir: data/, sock/, server.log
  std::string base_conninfo_;
  int port_ = 0;
  pid_t pid_ = -1;
  bool owned_ = false;  // started by this object (Stop/Restart/cleanup apply)
};

// The server shared by the tests of this binary: the one named by the file
// $GPUSPY_TEST_POSTGRES_FILE (written by postgres_test_server, the ctest fixture, when it is
// reachable), else one started on first use and stopped when the tests finish. nullptr with
// *why_not when none can be had (tests then GTEST_SKIP with that reason).
PostgresServer* SharedPostgres(std::string* why_not);

// A test with a database of its own on the shared server, dropped after it (skipped, with the
// reason, where no server can be had).
class PostgresDatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    server_ = SharedPostgres(&why);
    if (server_ == nullptr) GTEST_SKIP() << "PostgreSQL not available: " << why;
    database_ = server_->CreateDatabase(&why);
    ASSERT_FALSE(database_.empty()) << why;
  }
  void TearDown() override {
    if (server_ != nullptr && !database_.empty()) server_->DropDatabase(database_);
  }

  PostgresServer* server_ = nullptr;
  std::string database_;
};

}  // namespace gpuspy::testing
