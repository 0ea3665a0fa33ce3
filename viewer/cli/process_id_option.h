// --pid's check (attach, detach): a positive integer that fits a pid_t. CLI11's PositiveNumber
// answered "abc" with "Value abc not in range 0.000000 to 1797693134862315708145...".
#pragma once

#include "CLI/CLI.hpp"

namespace gpuspy::cli {

const CLI::Validator& ProcessIdValidator();

}  // namespace gpuspy::cli
