// A rule of api_classifier.h asked of every CUDA call in a window, worked out once per distinct
// name: a step has thousands of calls and a few dozen names, and reading a name (its HIP spelling,
// version suffixes, prefix lists) per call was ~2% of a trace's analysis.
#pragma once

#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy::analysis {

class ApiNameMemo {
 public:
  using Rule = bool (*)(std::string_view name);
  // `strings` must outlive the memo.
  ApiNameMemo(const StringTable& strings, Rule rule) : strings_(strings), rule_(rule) {}

  bool operator()(StringRef name) {
    auto [it, fresh] = seen_.try_emplace(name, false);
    if (fresh) it->second = rule_(strings_.Get(name));
    return it->second;
  }

 private:
  const StringTable& strings_;
  Rule rule_;
  absl::flat_hash_map<StringRef, bool> seen_;
};

}  // namespace gpuspy::analysis
