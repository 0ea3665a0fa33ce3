// `gpuspy run`: runs the command under gpuspy (LD_PRELOAD of the shim), after checking that the
// collector answers, and says at the end where the report is.
#include "viewer/cli/commands.h"
#include "viewer/cli/command_registry.h"
#include "viewer/cli/installed_library.h"
#include "viewer/cli/query_client.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace gpuspy::cli {
namespace {

pid_t g_child = -1;

// What a batch scheduler or a supervisor sends to the command's parent goes on to the command.
// Terminal signals (Ctrl-C, Ctrl-\) reach the command directly, as it shares our process group:
// the parent ignores those, or the command would get them twice.
constexpr int kForwarded[] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
constexpr int kFromTerminal[] = {SIGINT, SIGQUIT};

void Forward(int sig) {
  if (g_child > 0) kill(g_child, sig);
}

// Whether gpuspyd answers at `address`: a long job should not find out at its end that nothing
// was listening (its events would wait in the spill file).
bool CollectorAnswers(const std::string& address) {
  QueryClient q(address, 2.0);
  v1::ListJobsResponse jobs;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  return q.stub()->ListJobs(&ctx, v1::ListJobsRequest(), &jobs).ok();
}

// A directory only we can write (0700), for the CUDA marker; empty when none can be made (then
// run says nothing about CUDA rather than guess).
struct PrivateTempDir {
  PrivateTempDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/gpuspy-run-XXXXXX";
    if (mkdtemp(templ.data()) != nullptr) path = templ;
  }
  ~PrivateTempDir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
  PrivateTempDir(const PrivateTempDir&) = delete;
  PrivateTempDir& operator=(const PrivateTempDir&) = delete;
  std::string path;
};

}  // namespace

int Run(const GlobalOptions& g, const std::string& job, bool counters,
        const std::vector<std::string>& command) {
  if (command.empty()) {
    std::fprintf(stderr, "gpuspy run: nothing to run (usage: gpuspy run -- CMD ARGS...)\n");
    return 2;
  }
  // The path is absolute: the command may change directory before a child's loader reads it.
  const std::string shim = FindInstalledLibrary("libgpuspy.so", "GPUSPY_LIB");
  if (shim.empty()) {
    std::fprintf(stderr,
                 "gpuspy run: cannot find libgpuspy.so next to the gpuspy binary; set GPUSPY_LIB "
                 "to its path\n");
    return 1;
  }
  // The loader only warns about a missing LD_PRELOAD library and runs the job unprofiled.
  if (std::error_code ec; !std::filesystem::is_regular_file(shim, ec)) {
    std::fprintf(stderr, "gpuspy run: %s (from GPUSPY_LIB) does not exist\n", shim.c_str());
    return 1;
  }
  std::string preload = shim;
  if (const char* existing = std::getenv("LD_PRELOAD"); existing != nullptr && *existing != '\0') {
    preload += std::string(":") + existing;
  }
  setenv("LD_PRELOAD", preload.c_str(), 1);
  setenv("GPUSPY_COLLECTOR", g.collector.c_str(), 1);
  if (!job.empty()) setenv("GPUSPY_JOB", job.c_str(), 1);
  if (counters) setenv("GPUSPY_COUNTERS", "1", 1);
  // The stub creates this file when the CUDA driver loads it (any process of the command, at its
  // CUDA initialisation): without it, nothing can have been captured.
  const PrivateTempDir marker_dir;
  const std::string marker = marker_dir.path.empty() ? "" : marker_dir.path + "/cuda-initialised";
  if (!marker.empty()) setenv("GPUSPY_RUN_CUDA_MARKER", marker.c_str(), 1);
  if (!CollectorAnswers(g.collector)) {
    std::fprintf(stderr,
                 "gpuspy run: no gpuspyd answers at %s; running anyway: events wait in the spill "
                 "directory and are delivered once one runs there (start one: gpuspyd, or "
                 "--collector ADDR)\n",
                 g.collector.c_str());
  }
  std::vector<char*> argv;
  for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // The child tells us through a close-on-exec pipe whether exec failed (its errno), so that a
  // command exiting 127 is not taken for one that never ran.
  int exec_pipe[2];
  if (pipe2(exec_pipe, O_CLOEXEC) != 0) {
    std::fprintf(stderr, "gpuspy run: pipe: %s\n", std::strerror(errno));
    return 1;
  }
  for (int sig : kFromTerminal) signal(sig, SIG_IGN);
  g_child = fork();
  if (g_child < 0) {
    std::fprintf(stderr, "gpuspy run: fork: %s\n", std::strerror(errno));
    return 1;
  }
  if (g_child == 0) {
    for (int sig : kFromTerminal) signal(sig, SIG_DFL);
    close(exec_pipe[0]);
    execvp(argv[0], argv.data());
    const int err = errno;
    (void)!write(exec_pipe[1], &err, sizeof(err));
    _exit(127);
  }
  close(exec_pipe[1]);
  struct sigaction forward {};
  forward.sa_handler = Forward;
  for (int sig : kForwarded) sigaction(sig, &forward, nullptr);
  int exec_errno = 0;
  const bool exec_failed = read(exec_pipe[0], &exec_errno, sizeof(exec_errno)) == sizeof(exec_errno);
  close(exec_pipe[0]);
  int status = 0;
  while (waitpid(g_child, &status, 0) < 0 && errno == EINTR) {
  }
  if (exec_failed) {
    std::fprintf(stderr, "gpuspy run: cannot run %s: %s\n", argv[0], std::strerror(exec_errno));
    return 127;
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::error_code ec;
  const bool cuda_used = marker.empty() || std::filesystem::exists(marker, ec);
  if (!cuda_used) {
    // Not "its report: ...": there is none, and `gpuspy report` would only say "no job".
    std::fprintf(stderr,
                 "gpuspy: %s %s %d; it never initialised CUDA, so nothing was captured%s\n",
                 argv[0], WIFEXITED(status) ? "exited with status" : "was killed by signal",
                 WIFEXITED(status) ? code : WTERMSIG(status),
                 job.empty() ? "" : (" and there is no report for job '" + job + "'").c_str());
    return code;
  }
  std::fprintf(stderr, "gpuspy: %s %s %d; its report: %s\n", argv[0],
               WIFEXITED(status) ? "exited with status" : "was killed by signal",
               WIFEXITED(status) ? code : WTERMSIG(status),
               job.empty() ? "`gpuspy jobs` names its job, then `gpuspy report --job J`"
                           : ("`gpuspy report --job " + job + "`").c_str());
  return code;
}

RegisteredCommand RegisterRunCommand(CLI::App& app, const GlobalOptions& g,
                                     const std::vector<std::string>* command) {
  auto job = std::make_shared<std::string>();
  auto counters = std::make_shared<bool>(false);
  auto* run = app.add_subcommand("run", "Run a command with gpuspy injected (no code changes)");
  run->add_option("--job", *job, "Job id to report (default: from SLURM/torchrun/env)");
  run->add_flag("--counters", *counters,
                "Also sample the GPU's performance counters (tensor pipes, DRAM): GPUSPY_COUNTERS=1");
  run->footer("Example: gpuspy run --job bert -- python train.py --lr 3e-4");
  return {run, [&g, job, counters, command] { return Run(g, *job, *counters, *command); }};
}

}  // namespace gpuspy::cli
