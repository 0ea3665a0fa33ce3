// gpuspy: the command-line front end of the collector's Query service, plus `gpuspy run`.
#include <sys/types.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <string>
#include <system_error>
#include <vector>

#include "CLI/CLI.hpp"
#include "viewer/cli/attach_command.h"
#include "viewer/cli/attach_pid_command.h"
#include "viewer/cli/cli_docs.h"
#include "viewer/cli/commands.h"
#include "viewer/cli/export_command.h"
#include "viewer/cli/analyze_command.h"
#include "viewer/cli/diff_command.h"
#include "viewer/cli/import_command.h"
#include "viewer/cli/rank_option.h"
#include "viewer/cli/report_command.h"
#include "viewer/cli/spill_command.h"

namespace {

// One line: CLI11's message and where the usage is, then exit 2 as usage errors do elsewhere
// (a whole help text buried the one line that said what was wrong). --help and --version keep
// CLI11's own handling.
int UsageError(CLI::App& app, const CLI::ParseError& e) {
  if (e.get_exit_code() == 0) return app.exit(e);
  const std::vector<CLI::App*> parsed = app.get_subcommands();
  const std::string command = parsed.empty() ? "gpuspy" : "gpuspy " + parsed.front()->get_name();
  std::fprintf(stderr, "%s: %s (see %s --help)\n", command.c_str(), e.what(), command.c_str());
  return 2;
}

// --pid takes a process id; CLI11's PositiveNumber answered "abc" with "Value abc not in range
// 0.000000 to 1797693134862315708145...".
const CLI::Validator kProcessId(
    [](std::string& value) -> std::string {
      long pid = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), pid);
      if (ec == std::errc() && end == value.data() + value.size() && pid > 0 &&
          pid <= std::numeric_limits<pid_t>::max()) {
        return "";
      }
      return "'" + value + "' is not a process id (a positive integer)";
    },
    "PID");

}  // namespace

int main(int argc, char** argv) {
  gpuspy::cli::GlobalOptions g;
  g.collector = "127.0.0.1:7070";
  if (const char* env = std::getenv("GPUSPY_COLLECTOR"); env != nullptr && *env != '\0') {
    g.collector = env;
  }
  CLI::App app{"gpuspy: per-step GPU bottleneck reports for PyTorch/CUDA jobs", "gpuspy"};
  app.set_version_flag("--version", std::string("gpuspy ") + GPUSPY_VERSION);
  app.require_subcommand(1);
  // Global options may follow the command too: `gpuspy run --collector ADDR -- ...`,
  // `gpuspy jobs --json`.
  app.fallthrough();
  app.add_option("--collector", g.collector,
                 "gpuspyd address: host:port or unix:/path (default $GPUSPY_COLLECTOR or "
                 "127.0.0.1:7070)");
  std::string json_style;
  app.add_flag("--json{proto}", json_style,
               "Print the answer as JSON (for scripts): --json is protobuf's JSON mapping "
               "(64-bit integers as strings), --json=flat has every number as a number")
      ->check(CLI::IsMember({"proto", "flat"}));
  // Passed on as GPUSPY_TOKEN_FILE / GPUSPY_TLS_CA: what the clients read, and what `gpuspy run`
  // hands to the profiled program.
  std::string token_file, tls_ca;
  app.add_option("--token-file", token_file,
                 "File holding the token gpuspyd requires (default $GPUSPY_TOKEN, "
                 "$GPUSPY_TOKEN_FILE)")->check(CLI::ExistingFile);
  app.add_option("--tls-ca", tls_ca, "Talk TLS to gpuspyd, trusting this CA (PEM; default $GPUSPY_TLS_CA)")
      ->check(CLI::ExistingFile);
  app.add_option("--timeout", g.timeout_s, "Seconds to wait for gpuspyd")
      ->check(CLI::PositiveNumber)->capture_default_str();

  bool job_processes = false;
  std::string jobs_job;
  auto* jobs = app.add_subcommand("jobs", "List jobs with their processes, ranks, hosts and state");
  jobs->add_flag("--processes", job_processes,
                 "One line per process: rank, host, GPUs, state, heartbeat, clock skew");
  jobs->add_option("--job", jobs_job, "Only this job (implies --processes)");
  std::string delete_job, rename_job, rename_to;
  bool delete_force = false;
  auto* jobs_delete = jobs->add_subcommand(
      "delete", "Delete a job: its events, steps and processes (its owner or an admin)");
  jobs_delete->add_option("job", delete_job, "Job id")->required();
  jobs_delete->add_flag("--force", delete_force, "Delete it even while processes of the job are connected");
  jobs_delete->footer("Example: gpuspy jobs delete bert-old");
  auto* jobs_rename = jobs->add_subcommand(
      "rename", "Rename a job (its owner or an admin; the new name must be free)");
  jobs_rename->add_option("job", rename_job, "Job id")->required();
  jobs_rename->add_option("new_job", rename_to, "New job id")->required();
  jobs_rename->footer("Example: gpuspy jobs rename 123456 bert-lr3e-4");
  std::string pattern_job, pattern_re;
  auto* jobs_pattern = jobs->add_subcommand(
      "set-step-pattern", "Set the RE2 regex over NVTX range names that delimits a job's steps "
                          "(group 1 = the step number), in place of gpuspyd's --step-pattern; its "
                          "stored steps are found again at once ('' = gpuspyd's again; its owner or an admin)");
  jobs_pattern->add_option("job", pattern_job, "Job id")->required();
  jobs_pattern->add_option("pattern", pattern_re, "RE2 regex matched against the whole range name")->required();
  jobs_pattern->footer("Example: gpuspy jobs set-step-pattern bert 'train_step_(\\d+)'");

  gpuspy::cli::AttachOptions at;
  gpuspy::cli::ProcessSelector attach_to;
  auto* attach = app.add_subcommand(
      "attach", "Capture N steps (or a duration) of a live job, then print their reports: a job "
                "whose processes run dormant (GPUSPY_MODE=ondemand), or running processes "
                "started without gpuspy (--pid, --match, --cgroup)");
  attach->add_option("--job", at.job,
                     "Job id (with --pid/--match/--cgroup: the name to give their job)");
  attach->add_option("--pid", attach_to.pids,
                     "Load gpuspy into this running process first (ptrace; its owner or root)")
      ->check(kProcessId);
  attach->add_option("--match", attach_to.match,
                     "... into every running CUDA process whose command line matches this regex");
  attach->add_option("--cgroup", attach_to.cgroup,
                     "... into the CUDA processes of this cgroup directory (a SLURM job, a pod)")
      ->check(CLI::ExistingDirectory);
  attach->add_option("--rank", at.rank, "Only this rank");
  attach->add_option("--host", at.host, "Only processes on this host");
  attach->add_option("--steps", at.steps, "Capture this many steps")
                       ->check(CLI::PositiveNumber);
  attach->add_option("--duration", at.duration, "Capture for this long (30s, 2m)");
  attach->add_option("--kinds", at.kinds, "Only these kinds (kernel,memcpy,memset,sync,memory,runtime,driver,nvtx,overhead)")
      ->delimiter(',');
  attach->add_option("--start-timeout", at.start_timeout,
                     "Wait this long for an NVTX step boundary, then start anyway")
      ->capture_default_str();
  attach->add_flag("--detach", at.detach, "Return once the processes are armed");
  attach->add_option("--wait", at.wait, "Give up waiting for the capture after this long");
  attach->footer("Examples: gpuspy attach --job 1234 --steps 20\n"
                 "          gpuspy attach --pid 4242 --steps 10");

  std::string detach_job;
  pid_t detach_pid = 0;
  auto* detach = app.add_subcommand(
      "detach", "Stop a running capture early (what was captured is kept); with --pid, also end "
                "gpuspy's session in a process it was attached to");
  auto* detach_job_opt = detach->add_option("--job", detach_job, "Job id");
  detach->add_option("--pid", detach_pid, "A process gpuspy was attached to with --pid")
      ->check(kProcessId)->excludes(detach_job_opt);

  std::string job;
  uint64_t process = 0;
  auto* steps = app.add_subcommand("steps", "List the steps found for a job");
  steps->add_option("--job", job, "Job id")->required();
  int32_t steps_rank = -1, events_rank = -1, export_rank = -1;
  auto* steps_process = steps->add_option("--process", process, "Only this process id");
  steps->add_option("--rank", steps_rank, "Only the process that ran as this rank")
      ->check(CLI::NonNegativeNumber)->excludes(steps_process);

  gpuspy::cli::ReportOptions r;
  auto* report = app.add_subcommand(
      "report", "Per-step report: where the time went, the bottleneck, evidence and a fix");
  report->add_option("--job", r.job, "Job id")->required();
  auto* step_opt = report->add_option("--step", r.step, "One step number");
  auto* last_opt = report->add_option("--last", r.last, "The last K steps (default 10)");
  auto* all_opt = report->add_flag("--all", r.all, "Every step");
  step_opt->excludes(last_opt)->excludes(all_opt);
  last_opt->excludes(all_opt);
  auto* process_opt = report->add_option("--process", r.process, "Only this process id");
  report->add_option("--rank", r.rank, "Only the process that ran as this rank")
      ->check(CLI::NonNegativeNumber)->excludes(process_opt);
  report->add_flag("--ranks", r.ranks,
                   "Ranks x steps matrix of verdicts (multi-rank jobs); the straggler marked *");

  auto* summary = app.add_subcommand("summary", "Steady-state summary of a job");
  summary->add_option("--job", job, "Job id")->required();

  gpuspy::cli::EventsOptions e;
  auto* events = app.add_subcommand("events", "Raw events of a time window");
  events->add_option("--job", e.job, "Job id")->required();
  auto* events_process = events->add_option("--process", e.process, "Only this process id");
  events->add_option("--rank", events_rank, "Only the process that ran as this rank")
      ->check(CLI::NonNegativeNumber)->excludes(events_process);
  events->add_option("--from", e.from_ns, "Window start (ns, CUPTI clock)");
  events->add_option("--to", e.to_ns, "Window end (ns)");
  events->add_option("--limit", e.limit, "At most this many events (0 = every event, read page by page)")
      ->capture_default_str();

  auto* stats = app.add_subcommand("stats", "The collector's own counters");

  // analyze and import --offline share these options.
  gpuspy::cli::AnalyzeOptions an;
  auto add_offline_options = [&](CLI::App* cmd) {
    cmd->add_flag("--keep-going", an.keep_going,
                  "Go on with the files that read when others do not (analyse or import them; "
                  "the skipped ones are named on stderr; still exits 1)");
    cmd->add_option("--export", an.export_to, "Also write the events: --export perfetto out.json[.gz]")
        ->expected(2);
    cmd->add_option("--html", an.html, "Also write a self-contained static report page");
    cmd->add_option("--threads", an.threads, "Files read at once (default: one per core)");
    cmd->add_flag("--timings", an.timings, "Per-stage MB/s of each file on stderr");
  };
  auto add_step_pattern = [&](CLI::App* cmd, std::string* into) {
    cmd->add_option("--step-pattern", *into,
                    "RE2 regex over NVTX range names that delimits steps (group 1 = the step number; "
                    "default: ProfilerStep#(\\d+))");
  };
  auto* analyze = app.add_subcommand(
      "analyze", "Analyse PyTorch profiler traces here, no gpuspyd: per-step reports, job summary, "
                 "cross-rank findings; several files = ranks of one job");
  analyze->add_option("files", an.files, "Trace files (*.pt.trace.json[.gz])")
      ->required()->check(CLI::ExistingFile);
  analyze->add_option("--job", an.job, "Job id (default: the first file's name)");
  add_offline_options(analyze);
  add_step_pattern(analyze, &an.step_pattern);
  analyze->footer("Example: gpuspy analyze run/rank*.pt.trace.json.gz --html report.html");

  gpuspy::cli::DiffOptions df;
  auto* diff = app.add_subcommand(
      "diff", "Why B is slower (or faster) than A: step time, where it goes, and the changes that "
              "add up to the difference");
  diff->add_option("a", df.a, "Run A: trace file(s) (a file or a directory) or a job id, "
                              "optionally @RANK and :STEPS (N, A-B, A-, -B)")->required();
  diff->add_option("b", df.b, "Run B, as A")->required();
  diff->add_option("--threads", df.threads, "Trace files read at once (default: one per core)");
  diff->footer("Examples: gpuspy diff last_week/ today/    gpuspy diff bert@0 bert@7\n"
               "          gpuspy diff bert:100-200 bert:900-1000    gpuspy diff base.json.gz pr.json.gz");

  gpuspy::cli::ImportOptions im;
  bool import_offline = false;
  auto* import = app.add_subcommand(
      "import", "Import PyTorch profiler traces (*.pt.trace.json[.gz]); several files = ranks of one job");
  import->add_option("files", im.files, "Trace files")->required()->check(CLI::ExistingFile);
  import->add_option("--job", im.job, "Job id (default: the first file's name)");
  import->add_flag("--offline", import_offline, "Analyse here instead (gpuspy analyze)");
  import->add_flag("--replace", im.replace,
                   "Files imported before (same content) replace their earlier copy instead of "
                   "being skipped");
  add_offline_options(import);
  add_step_pattern(import, &im.step_pattern);
  import->footer("A file whose content the collector holds already is skipped (\"already imported as "
                 "job J\"). If any file does not read, nothing is imported (exit 1); --keep-going "
                 "imports the others, names the skipped ones on stderr and still exits 1.");

  gpuspy::cli::ExportOptions x;
  auto* exp = app.add_subcommand("export", "Write a job (or some steps) as a Perfetto/Chrome trace");
  exp->add_option("--job", x.job, "Job id")->required();
  exp->add_option("--steps", x.steps, "Step N or range A-B (default: everything)");
  auto* export_process = exp->add_option("--process", x.process, "Only this process id");
  exp->add_option("--rank", export_rank, "Only the process that ran as this rank")
      ->check(CLI::NonNegativeNumber)->excludes(export_process);
  exp->add_option("-o,--output", x.output, "Output file (.json or .json.gz)")->required();

  gpuspy::cli::SpillOptions sp;
  auto* spill = app.add_subcommand(
      "spill", "Spill files of this user's processes; --deliver sends what ended ones left behind");
  spill->add_option("--spill-dir", sp.dir, "Spill directory (default $GPUSPY_SPILL_DIR, else "
                                           "/tmp/gpuspy-<uid>/spill)");
  spill->add_flag("--deliver", sp.deliver,
                  "Deliver the files of ended processes to the collector, under their identity");

  std::string run_job;
  std::vector<std::string> command;
  auto* run = app.add_subcommand("run", "Run a command with gpuspy injected (no code changes)");
  run->add_option("--job", run_job, "Job id to report (default: from SLURM/torchrun/env)");
  run->footer("Example: gpuspy run --job bert -- python train.py --lr 3e-4");

  std::string shell;
  auto* completion = app.add_subcommand(
      "completion", "Print a shell completion script (bash or zsh) made from these definitions");
  completion->add_option("shell", shell, "bash or zsh")->required()->check(CLI::IsMember({"bash", "zsh"}));
  completion->footer("Example: source <(gpuspy completion bash)");
  auto* man = app.add_subcommand("man", "Print gpuspy(1), the man page made from these definitions");
  man->footer("Example: gpuspy man > gpuspy.1 && man -l gpuspy.1");

  // Everything after the first `--` is the command for `gpuspy run`; CLI11 sees what precedes it.
  int cli_argc = argc;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--") {
      cli_argc = i;
      command.assign(argv + i + 1, argv + argc);
      break;
    }
  }
  try {
    app.parse(cli_argc, argv);
  } catch (const CLI::ParseError& e) {
    return UsageError(app, e);
  }
  g.json = !json_style.empty();
  g.json_style = json_style == "flat" ? gpuspy::cli::JsonStyle::kFlat : gpuspy::cli::JsonStyle::kProto;

  if (!token_file.empty()) {
    unsetenv("GPUSPY_TOKEN");  // the flag wins over the environment
    setenv("GPUSPY_TOKEN_FILE", token_file.c_str(), 1);
  }
  if (!tls_ca.empty()) setenv("GPUSPY_TLS_CA", tls_ca.c_str(), 1);

  if (*completion) {
    std::cout << (shell == "zsh" ? gpuspy::cli::ZshCompletion(app) : gpuspy::cli::BashCompletion(app));
    return 0;
  }
  if (*man) {
    std::cout << gpuspy::cli::ManPage(app, std::string("gpuspy ") + GPUSPY_VERSION);
    return 0;
  }
  if (*jobs_delete) return gpuspy::cli::DeleteJob(g, delete_job, delete_force);
  if (*jobs_rename) return gpuspy::cli::RenameJob(g, rename_job, rename_to);
  if (*jobs_pattern) return gpuspy::cli::SetStepPattern(g, pattern_job, pattern_re);
  if (*jobs) return gpuspy::cli::Jobs(g, jobs_job, job_processes || !jobs_job.empty());
  if (*attach) {
    if (!attach_to.empty()) {
      // A program gpuspy joins late has its NVTX unhooked (README): waiting for an NVTX range
      // would usually only delay the first event; a program whose NVTX is hooked and whose steps
      // are shorter than this still gets an aligned window.
      if (attach->get_option("--start-timeout")->count() == 0) at.start_timeout = "200ms";
      return gpuspy::cli::AttachToProcesses(g, at, attach_to);
    }
    if (at.job.empty()) {
      std::fprintf(stderr, "gpuspy attach: say which job (--job) or which processes (--pid, "
                           "--match, --cgroup)\n");
      return 2;
    }
    return gpuspy::cli::Attach(g, at);
  }
  if (*detach) {
    if (detach_pid > 0) return gpuspy::cli::DetachFromProcess(g, detach_pid);
    if (detach_job.empty()) {
      std::fprintf(stderr, "gpuspy detach: say which job (--job) or which process (--pid)\n");
      return 2;
    }
    return gpuspy::cli::Detach(g, detach_job);
  }
  if (*steps) {
    if (!gpuspy::cli::ResolveRank(g, job, steps_rank, &process)) return 1;
    return gpuspy::cli::Steps(g, job, process);
  }
  if (*report) return gpuspy::cli::Report(g, r);
  if (*summary) return gpuspy::cli::Summary(g, job);
  if (*events) {
    if (!gpuspy::cli::ResolveRank(g, e.job, events_rank, &e.process)) return 1;
    return gpuspy::cli::Events(g, e);
  }
  if (*stats) return gpuspy::cli::Stats(g);
  if (*analyze) return gpuspy::cli::Analyze(g, an);
  if (*diff) return gpuspy::cli::Diff(g, df);
  if (*import && import_offline) {
    an.files = im.files;
    an.job = im.job;
    an.step_pattern = im.step_pattern;
    return gpuspy::cli::Analyze(g, an);
  }
  if (*import) {
    im.keep_going = an.keep_going;  // one --keep-going flag, shared with --offline
    return gpuspy::cli::Import(g, im);
  }
  if (*exp) {
    if (!gpuspy::cli::ResolveRank(g, x.job, export_rank, &x.process)) return 1;
    return gpuspy::cli::Export(g, x);
  }
  if (*spill) return gpuspy::cli::Spill(g, sp);
  if (*run) {
    return gpuspy::cli::Run(g, run_job, command);
  }
  return 2;
}
