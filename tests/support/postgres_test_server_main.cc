// postgres_test_server start|stop FILE: one throwaway PostgreSQL server shared by every test
// process of a ctest run (the gpuspy_postgres ctest fixture). `start` writes the server's base
// conninfo, pid and dir to FILE; test processes find it through $GPUSPY_TEST_POSTGRES_FILE
// (SharedPostgres). `stop` shuts it down and removes its dir. Without the fixture each test
// process starts its own server.
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "tests/support/postgres_fixture.h"

int main(int argc, char** argv) {
  if (argc != 3 || (std::string(argv[1]) != "start" && std::string(argv[1]) != "stop")) {
    std::fprintf(stderr, "usage: postgres_test_server start|stop FILE\n");
    return 2;
  }
  const std::string file = argv[2];
  if (std::string(argv[1]) == "start") {
    std::string error;
    auto server = gpuspy::testing::PostgresServer::Start({.durable = false, .detach = true}, &error);
    if (server == nullptr) {
      // Not a failure of the suite: the tests that need PostgreSQL skip with the same reason.
      std::printf("no PostgreSQL server for the tests: %s\n", error.c_str());
      std::filesystem::remove(file);
      return 0;
    }
    std::ofstream(file) << server->base_conninfo() << "\n" << server->pid() << "\n" << server->dir() << "\n";
    std::printf("PostgreSQL for the tests: %s (pid %d)\n", server->base_conninfo().c_str(), server->pid());
    return 0;
  }
  std::ifstream in(file);
  std::string base, pid_text, dir;
  if (!std::getline(in, base) || !std::getline(in, pid_text) || !std::getline(in, dir)) return 0;
  const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
  kill(pid, SIGINT);  // fast shutdown
  for (int i = 0; i < 3000 && kill(pid, 0) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (kill(pid, 0) == 0) kill(pid, SIGKILL);
  std::error_code ec;
  if (dir.starts_with("/tmp/gpuspy-pg.")) std::filesystem::remove_all(dir, ec);
  std::filesystem::remove(file, ec);
  return 0;
}
