// Shell completion scripts and a man page generated from the CLI11 definitions (each command's
// Register<Name>Command, command_registry.h), so they can never disagree with what `gpuspy`
// accepts: `gpuspy completion bash|zsh`, `gpuspy man`.
#pragma once

#include <string>

#include "CLI/CLI.hpp"

namespace gpuspy::cli {

// A bash completion script: `source <(gpuspy completion bash)`.
std::string BashCompletion(const CLI::App& app);
// A zsh completion function (compdef): `source <(gpuspy completion zsh)`.
std::string ZshCompletion(const CLI::App& app);
// gpuspy(1) in man(7) format: `gpuspy man > gpuspy.1; man -l gpuspy.1`.
std::string ManPage(const CLI::App& app, const std::string& version);

}  // namespace gpuspy::cli
