#include "tests/support/postgres_fixture.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>
#include "tests/support/subprocess.h"

namespace gpuspy::testing {
namespace {

namespace fs = std::filesystem;

bool IsExecutable(const fs::path& p) { return access(p.c_str(), X_OK) == 0; }

bool HasServerBinaries(const fs::path& dir) {
  return IsExecutable(dir / "initdb") && IsExecutable(dir / "postgres");
}

std::string Tail(const std::string& path, size_t bytes = 2000) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string s = ss.str();
  return s.size() > bytes ? s.substr(s.size() - bytes) : s;
}

// Whom the server runs as: PostgreSQL will not run as root.
struct RunAs {
  bool switch_user = false;
  uid_t uid = 0;
  gid_t gid = 0;
};

RunAs ServerUser(std::string* error) {
  RunAs r;
  if (geteuid() != 0) return r;
  const passwd* pw = getpwnam("nobody");
  if (pw == nullptr) {
    *error = "running as root and there is no 'nobody' user to run PostgreSQL as";
    return r;
  }
  r.switch_user = true;
  r.uid = pw->pw_uid;
  r.gid = pw->pw_gid;
  return r;
}

struct ChildSpec {
  std::vector<std::string> argv;
  std::string log_path;
  std::string cwd;
  RunAs as;
  bool detach = false;
};

// fork + (setsid) + drop to the server user + (parent-death signal) + exec. Everything the child
// needs is prepared before fork.
pid_t Spawn(const ChildSpec& spec) {
  std::vector<char*> argv;
  for (const std::string& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid != 0) return pid;
  if (spec.detach) setsid();
  const int log = open(spec.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log >= 0) {
    dup2(log, 1);
    dup2(log, 2);
  }
  const int null_fd = open("/dev/null", O_RDONLY);
  if (null_fd >= 0) dup2(null_fd, 0);
  if (chdir(spec.cwd.c_str()) != 0) _exit(126);
  if (spec.as.switch_user) {
    if (setgroups(0, nullptr) != 0 || setgid(spec.as.gid) != 0 || setuid(spec.as.uid) != 0) {
      _exit(125);
    }
  }
  // After the uid change, which clears it. SIGQUIT: immediate shutdown, children included.
  if (!spec.detach) {
    prctl(PR_SET_PDEATHSIG, SIGQUIT);
    if (getppid() != parent) _exit(124);  // the test process is already gone
  }
  setenv("LC_ALL", "C", 1);
  execv(argv[0], argv.data());
  _exit(127);
}

bool ProcessGone(pid_t pid, bool is_child) {
  if (is_child) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    return r == pid || (r < 0 && errno == ECHILD);
  }
  return kill(pid, 0) != 0 && errno == ESRCH;
}

bool WaitGone(pid_t pid, bool is_child, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (ProcessGone(pid, is_child)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return ProcessGone(pid, is_child);
}

std::string ConnError(PGconn* c) {
  std::string s = PQerrorMessage(c);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::atomic<int> g_database_counter{0};

}  // namespace

std::string PostgresServer::FindBinDir() {
  if (const char* env = std::getenv("GPUSPY_POSTGRES_BIN"); env != nullptr && *env != '\0') {
    return HasServerBinaries(env) ? env : "";
  }
  std::error_code ec;
  int best_version = -1;
  std::string best;
  for (const auto& e : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    const int version = std::atoi(name.c_str());
    if (version > best_version && HasServerBinaries(e.path() / "bin")) {
      best_version = version;
      best = (e.path() / "bin").string();
    }
  }
  if (!best.empty()) return best;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path == nullptr ? "" : path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty() || !IsExecutable(fs::path(dir) / "initdb")) continue;
    // /usr/local/bin/initdb may be a symlink into the real bin dir, where postgres lives.
    const fs::path real = fs::canonical(fs::path(dir) / "initdb", ec).parent_path();
    if (!ec && HasServerBinaries(real)) return real.string();
  }
  return "";
}

std::unique_ptr<PostgresServer> PostgresServer::Start(const PostgresServerOptions& options,
                                                      std::string* error) {
  std::unique_ptr<PostgresServer> s(new PostgresServer());
  s->options_ = options;
  s->bin_dir_ = FindBinDir();
  if (s->bin_dir_.empty()) {
    *error = "PostgreSQL server binaries (initdb, postgres) not found: install the Debian "
             "'postgresql' package (scripts/install-deps.sh --tests) or set GPUSPY_POSTGRES_BIN";
    return nullptr;
  }
  const RunAs as = ServerUser(error);
  if (!error->empty()) return nullptr;
  char tmpl[] = "/tmp/gpuspy-pg.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    *error = std::string("mkdtemp: ") + std::strerror(errno);
    return nullptr;
  }
  s->dir_ = tmpl;
  s->owned_ = true;
  chmod(s->dir_.c_str(), 0755);  // the server user must reach data/ and sock/
  for (const char* sub : {"/data", "/sock"}) {
    const std::string p = s->dir_ + sub;
    mkdir(p.c_str(), 0700);
    if (as.switch_user && chown(p.c_str(), as.uid, as.gid) != 0) {
      *error = "chown " + p + ": " + std::strerror(errno);
      return nullptr;
    }
  }
  const std::string log = s->dir_ + "/server.log";
  {
    std::ofstream create(log);
  }
  if (as.switch_user && chown(log.c_str(), as.uid, as.gid) != 0) {
    *error = "chown " + log + ": " + std::strerror(errno);
    return nullptr;
  }
  std::vector<std::string> initdb = {s->bin_dir_ + "/initdb", "-D", s->dir_ + "/data", "-A",
                                     "trust", "-U", "gpuspy", "-E", "UTF8", "--locale=C"};
  if (!options.durable) initdb.push_back("--no-sync");
  const pid_t pid = Spawn({initdb, log, s->dir_, as, false});
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    *error = "initdb failed (status " + std::to_string(status) + "): " + Tail(log);
    return nullptr;
  }
  s->port_ = FreeTcpPort();
  s->base_conninfo_ =
      "host=" + s->dir_ + "/sock port=" + std::to_string(s->port_) + " user=gpuspy";
  if (!s->Launch(error)) return nullptr;
  return s;
}

bool PostgresServer::Launch(std::string* error) {
  std::string why;
  const RunAs as = ServerUser(&why);
  std::vector<std::string> argv = {bin_dir_ + "/postgres",  "-D", dir_ + "/data",
                                   "-p", std::to_string(port_), "-k", dir_ + "/sock",
                                   "-c", "listen_addresses=",     "-c", "shared_buffers=32MB",
                                   "-c", "max_connections=200"};
  if (!options_.durable) {
    for (const char* setting : {"fsync=off", "full_page_writes=off"}) {
      argv.push_back("-c");
      argv.push_back(setting);
    }
  }
  const std::string log = dir_ + "/server.log";
  pid_ = Spawn({argv, log, dir_, as, options_.detach});
  const std::string ping = Conninfo("postgres") + " connect_timeout=2";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (PQping(ping.c_str()) == PQPING_OK) return true;
    if (ProcessGone(pid_, true)) {
      *error = "postgres exited during startup: " + Tail(log);
      pid_ = -1;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  *error = "postgres did not accept connections within 60 s: " + Tail(log);
  return false;
}

std::unique_ptr<PostgresServer> PostgresServer::Attach(const std::string& base_conninfo) {
  std::unique_ptr<PostgresServer> s(new PostgresServer());
  s->base_conninfo_ = base_conninfo;
  if (const size_t at = base_conninfo.find("port="); at != std::string::npos) {
    s->port_ = std::atoi(base_conninfo.c_str() + at + 5);
  }
  return s;
}

PostgresServer::~PostgresServer() {
  if (!owned_ || options_.detach) return;
  std::string ignored;
  Stop(&ignored);
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

bool PostgresServer::Stop(std::string* error) {
  if (!owned_ || pid_ <= 0) return true;
  // SIGINT: fast shutdown (disconnects clients, checkpoints, exits).
  kill(pid_, SIGINT);
  const bool is_child = !options_.detach;
  if (!WaitGone(pid_, is_child, std::chrono::seconds(30))) {
    kill(pid_, SIGKILL);
    WaitGone(pid_, is_child, std::chrono::seconds(5));
    *error = "postgres did not stop within 30 s; killed";
    pid_ = -1;
    return false;
  }
  pid_ = -1;
  return true;
}

bool PostgresServer::Restart(std::string* error) {
  if (!owned_) {
    *error = "not a server this test started";
    return false;
  }
  if (pid_ > 0 && !Stop(error)) return false;
  return Launch(error);
}

std::string PostgresServer::Conninfo(const std::string& dbname) const {
  return base_conninfo_ + " dbname=" + dbname;
}

std::string PostgresServer::Exec(const std::string& dbname, const std::string& sql) {
  PGconn* c = PQconnectdb(Conninfo(dbname).c_str());
  std::string err;
  if (PQstatus(c) != CONNECTION_OK) {
    err = ConnError(c);
  } else {
    PGresult* r = PQexec(c, sql.c_str());
    const ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) err = ConnError(c);
    PQclear(r);
  }
  PQfinish(c);
  return err;
}

std::string PostgresServer::QueryValue(const std::string& dbname, const std::string& sql) {
  PGconn* c = PQconnectdb(Conninfo(dbname).c_str());
  std::string value;
  if (PQstatus(c) == CONNECTION_OK) {
    PGresult* r = PQexec(c, sql.c_str());
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0 && PQnfields(r) > 0) {
      value = PQgetvalue(r, 0, 0);
    }
    PQclear(r);
  }
  PQfinish(c);
  return value;
}

std::string PostgresServer::CreateDatabase(std::string* error) {
  const std::string name = "gpuspy_test_" + std::to_string(getpid()) + "_" +
                           std::to_string(++g_database_counter);
  // template0 with a file copy: no WAL for the copied files (the server is throwaway).
  *error = Exec("postgres", "CREATE DATABASE " + name + " TEMPLATE template0 STRATEGY FILE_COPY");
  return error->empty() ? name : "";
}

void PostgresServer::DropDatabase(const std::string& dbname) {
  (void)Exec("postgres", "DROP DATABASE IF EXISTS " + dbname + " WITH (FORCE)");
}

namespace {

std::mutex g_shared_mu;
std::unique_ptr<PostgresServer> g_shared;
std::string g_shared_error;

class SharedPostgresEnvironment : public ::testing::Environment {
 public:
  void TearDown() override {
    std::lock_guard lock(g_shared_mu);
    g_shared.reset();
  }
};

[[maybe_unused]] ::testing::Environment* const g_environment =
    ::testing::AddGlobalTestEnvironment(new SharedPostgresEnvironment);

}  // namespace

PostgresServer* SharedPostgres(std::string* why_not) {
  std::lock_guard lock(g_shared_mu);
  if (g_shared != nullptr) return g_shared.get();
  if (!g_shared_error.empty()) {
    *why_not = g_shared_error;
    return nullptr;
  }
  if (const char* file = std::getenv("GPUSPY_TEST_POSTGRES_FILE"); file != nullptr && *file) {
    std::ifstream in(file);
    std::string base;
    if (std::getline(in, base) && !base.empty() &&
        PQping((base + " dbname=postgres connect_timeout=2").c_str()) == PQPING_OK) {
      g_shared = PostgresServer::Attach(base);
      return g_shared.get();
    }
  }
  g_shared = PostgresServer::Start({}, &g_shared_error);
  if (g_shared == nullptr) *why_not = g_shared_error;
  return g_shared.get();
}

}  // namespace gpuspy::testing
