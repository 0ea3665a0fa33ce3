// A shared trace's file name as a gtest parameter name: "sampled_rank-0.json.gz" ->
// "sampled_rank_0" (gtest allows only letters, digits and underscores).
#pragma once

#include <string>

namespace gpuspy::testing {

inline std::string TraceTestName(std::string file) {
  file = file.substr(0, file.find('.'));
  for (char& c : file) {
    if (c == '-') c = '_';
  }
  return file;
}

}  // namespace gpuspy::testing
