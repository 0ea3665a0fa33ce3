// How the `gpuspy` commands come to be: each command's file declares its subcommand on the
// CLI11 app — flags, help, footer — and returns what runs when the command line chose it.
// main.cc sets the global options, calls these in the order `gpuspy --help` lists them, parses,
// and runs the chosen one.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "viewer/cli/commands.h"

namespace gpuspy::cli {

struct RegisteredCommand {
  CLI::App* command;  // owned by the app
  // The exit code. Called after parsing, once `g` holds the global options as given.
  std::function<int()> run;
};

// `g` is read when the command runs, not when it is registered.
RegisteredCommand RegisterJobsCommand(CLI::App& app, const GlobalOptions& g);      // jobs_command.cc
RegisteredCommand RegisterAttachCommand(CLI::App& app, const GlobalOptions& g);    // attach_command.cc
RegisteredCommand RegisterDetachCommand(CLI::App& app, const GlobalOptions& g);    // attach_command.cc
RegisteredCommand RegisterStepsCommand(CLI::App& app, const GlobalOptions& g);     // steps_command.cc
RegisteredCommand RegisterReportCommand(CLI::App& app, const GlobalOptions& g);    // report_command.cc
RegisteredCommand RegisterSummaryCommand(CLI::App& app, const GlobalOptions& g);   // summary_command.cc
RegisteredCommand RegisterEventsCommand(CLI::App& app, const GlobalOptions& g);    // events_command.cc
RegisteredCommand RegisterStatsCommand(CLI::App& app, const GlobalOptions& g);     // stats_command.cc
RegisteredCommand RegisterAnalyzeCommand(CLI::App& app, const GlobalOptions& g);   // analyze_command.cc
RegisteredCommand RegisterDiffCommand(CLI::App& app, const GlobalOptions& g);      // diff_command.cc
RegisteredCommand RegisterImportCommand(CLI::App& app, const GlobalOptions& g);    // import_command.cc
RegisteredCommand RegisterExportCommand(CLI::App& app, const GlobalOptions& g);    // export_command.cc
RegisteredCommand RegisterSpillCommand(CLI::App& app, const GlobalOptions& g);     // spill_command.cc
// `command`: what followed `--` on the command line (main.cc cuts it off before CLI11 parses).
RegisteredCommand RegisterRunCommand(CLI::App& app, const GlobalOptions& g,
                                     const std::vector<std::string>* command);    // run_command.cc
// Generated from `app` as it stands when they run: every command registered before (cli_docs.cc).
RegisteredCommand RegisterCompletionCommand(CLI::App& app);
RegisteredCommand RegisterManCommand(CLI::App& app, const std::string& version);

}  // namespace gpuspy::cli
