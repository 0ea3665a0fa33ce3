// gpuspy: the command-line front end of the collector's Query service, plus `gpuspy run`. Each
// command declares its own flags and what it runs (command_registry.h); this file holds only
// the global options and the order of the commands.
#include "viewer/cli/gpuspy_program.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "viewer/cli/command_registry.h"
#include "viewer/cli/commands.h"

namespace gpuspy::cli {
namespace {

// One line: CLI11's message and where the usage is, then exit 2 as usage errors do elsewhere
// (a whole help text buried the one line that said what was wrong). --help and --version keep
// CLI11's own handling.
// The first word of the command line that stands where a command goes and is none ("" when
// there is none): what a mistyped command gets named by, not CLI11's "A subcommand is required".
std::string UnknownCommand(CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.empty() || arg == "--") break;
    if (arg[0] == '-') {
      const CLI::Option* o = arg.find('=') == std::string::npos ? app.get_option_no_throw(arg) : nullptr;
      if (o != nullptr && o->get_items_expected_min() > 0) ++i;  // its value
      continue;
    }
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      if (sub->check_name(arg)) return "";
    }
    return arg;
  }
  return "";
}

int UsageError(CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  if (e.get_exit_code() == 0) return app.exit(e);
  const std::vector<CLI::App*> parsed = app.get_subcommands();
  if (const std::string unknown = parsed.empty() ? UnknownCommand(app, argc, argv) : "";
      !unknown.empty()) {
    std::fprintf(stderr, "gpuspy: '%s' is not a command (see gpuspy --help)\n", unknown.c_str());
    return 2;
  }
  const std::string command = parsed.empty() ? "gpuspy" : "gpuspy " + parsed.front()->get_name();
  std::fprintf(stderr, "%s: %s (see %s --help)\n", command.c_str(), e.what(), command.c_str());
  return 2;
}

}  // namespace

int RunGpuspy(int argc, char** argv, const char* version_number) {
  GlobalOptions g;
  g.collector = "127.0.0.1:7070";
  if (const char* env = std::getenv("GPUSPY_COLLECTOR"); env != nullptr && *env != '\0') {
    g.collector = env;
  }
  CLI::App app{"gpuspy: per-step GPU bottleneck reports for PyTorch/CUDA jobs", "gpuspy"};
  const std::string version = std::string("gpuspy ") + version_number;
  app.set_version_flag("--version", version);
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
  bool csv = false;
  app.add_flag("--csv", csv,
               "Print the table as CSV (report: the step table; summary: the findings with the "
               "job's figures; analyze: the step table); not with --json");
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

  // Everything after the first `--` is the command for `gpuspy run`; CLI11 sees what precedes it.
  std::vector<std::string> command;
  int cli_argc = argc;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--") {
      cli_argc = i;
      command.assign(argv + i + 1, argv + argc);
      break;
    }
  }

  // In the order `gpuspy --help`, the completion scripts and the man page list them.
  const std::vector<RegisteredCommand> commands = {
      RegisterJobsCommand(app, g),    RegisterAttachCommand(app, g),
      RegisterDetachCommand(app, g),  RegisterStepsCommand(app, g),
      RegisterReportCommand(app, g),  RegisterSummaryCommand(app, g),
      RegisterEventsCommand(app, g),  RegisterStatsCommand(app, g),
      RegisterAnalyzeCommand(app, g), RegisterDiffCommand(app, g),
      RegisterImportCommand(app, g),  RegisterExportCommand(app, g),
      RegisterSpillCommand(app, g),   RegisterRunCommand(app, g, &command),
      RegisterCompletionCommand(app), RegisterManCommand(app, version),
  };

  try {
    app.parse(cli_argc, argv);
  } catch (const CLI::ParseError& e) {
    return UsageError(app, e, cli_argc, argv);
  }
  g.json = !json_style.empty();
  g.csv = csv;
  const std::string used = app.get_subcommands().front()->get_name();
  if (csv && g.json) {
    std::fprintf(stderr, "gpuspy %s: --csv and --json exclude each other: pick one (see gpuspy %s --help)\n",
                 used.c_str(), used.c_str());
    return 2;
  }
  if (csv && used != "report" && used != "summary" && used != "analyze") {
    std::fprintf(stderr, "gpuspy %s: --csv is for report, summary and analyze (see gpuspy %s --help)\n",
                 used.c_str(), used.c_str());
    return 2;
  }
  g.json_style = json_style == "flat" ? JsonStyle::kFlat : JsonStyle::kProto;
  if (!token_file.empty()) {
    unsetenv("GPUSPY_TOKEN");  // the flag wins over the environment
    setenv("GPUSPY_TOKEN_FILE", token_file.c_str(), 1);
  }
  if (!tls_ca.empty()) setenv("GPUSPY_TLS_CA", tls_ca.c_str(), 1);

  for (const RegisteredCommand& c : commands) {
    if (*c.command) return c.run();
  }
  return 2;
}

}  // namespace gpuspy::cli
