// `gpuspy attach` / `gpuspy detach`: on-demand capture windows on a live job.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "viewer/cli/commands.h"

namespace gpuspy::cli {

struct AttachOptions {
  std::string job;
  int32_t rank = -1;
  std::string host;
  uint32_t steps = 0;
  std::string duration;          // "30s", "2m" (absl duration syntax)
  std::vector<std::string> kinds;
  std::string start_timeout = "10s";  // wait this long for an NVTX step boundary
  bool detach = false;           // return once armed
  std::string wait = "";         // give up waiting after this (default: generous from the request)
  std::vector<std::string> process_keys;  // only these processes (attach --pid), not their whole job
};

int Attach(const GlobalOptions& g, const AttachOptions& a);
int Detach(const GlobalOptions& g, const std::string& job);

}  // namespace gpuspy::cli
