// Per-process string interning. Kernel names are long (templated C++ names of 200+ chars) and
// repeat millions of times, so events carry a small StringRef instead; the producer interns, the
// collector defines refs as the dictionary arrives.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "model/events.h"

namespace gpuspy {

class StringTable {
 public:
  StringTable() = default;
  StringTable(const StringTable& other) { *this = other; }
  StringTable& operator=(const StringTable& other);
  StringTable(StringTable&&) = default;
  StringTable& operator=(StringTable&&) = default;

  // Producer side: the ref of `value`, assigning the next free ref on first sight. "" is ref 0.
  StringRef Intern(std::string_view value);

  // Consumer side: records that `ref` names `value`. Redefining a ref with the same value is a
  // no-op; with a different value it is an error (a corrupt or hostile stream).
  absl::Status Define(StringRef ref, std::string_view value);

  bool Contains(StringRef ref) const { return ref == 0 || by_ref_.contains(ref); }
  // The string for `ref`; "" for 0 or an unknown ref.
  std::string_view Get(StringRef ref) const;
  // Looks up an already interned value without adding it; 0 when absent.
  StringRef Find(std::string_view value) const;
  size_t size() const { return by_ref_.size(); }
  StringRef max_ref() const { return next_ref_ - 1; }

  // The i-th definition (0-based, in order of definition): lets an encoder send only what is new.
  std::pair<StringRef, std::string_view> Entry(size_t i) const {
    return {order_[i].first, *order_[i].second};
  }

  // Visits (ref, value) for every defined string, in order of definition.
  template <typename F>
  void ForEach(F&& f) const {
    for (const auto& [ref, value] : order_) f(ref, *value);
  }

 private:
  std::deque<std::string> storage_;  // stable addresses for the string_view keys below
  absl::flat_hash_map<std::string_view, StringRef> by_value_;
  absl::flat_hash_map<StringRef, const std::string*> by_ref_;
  std::deque<std::pair<StringRef, const std::string*>> order_;
  StringRef next_ref_ = 1;
};

}  // namespace gpuspy
