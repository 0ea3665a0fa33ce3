// Per-process string interning. Kernel names are long (templated C++ names of 200+ chars) and
// repeat millions of times, so events carry a small StringRef instead; the producer interns, the
// collector defines refs as the dictionary arrives.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
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

  bool Contains(StringRef ref) const { return ref == 0 || Lookup(ref) != nullptr; }
  // The string for `ref`; "" for 0 or an unknown ref.
  std::string_view Get(StringRef ref) const;
  // Looks up an already interned value without adding it; 0 when absent.
  StringRef Find(std::string_view value) const;
  size_t size() const { return order_.size(); }
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
  // Refs are handed out (Intern) and defined (Define, by a producer that interned them) in
  // sequence: a ref below kDenseRefs is looked up by index, the rest (a hostile stream's, say) in
  // a map. Get is called for every event an analysis names; a hash lookup was ~1% of a run.
  static constexpr StringRef kDenseRefs = 1u << 18;  // 2 MiB of pointers at most
  const std::string* Lookup(StringRef ref) const {
    if (ref < dense_.size()) return dense_[ref];
    if (ref < kDenseRefs) return nullptr;
    auto it = sparse_.find(ref);
    return it == sparse_.end() ? nullptr : it->second;
  }
  void Remember(StringRef ref, const std::string* value);

  // absl::Hash has no std::string_view overload where absl::string_view is its own type (Debian's
  // abseil): it falls back to std::hash, a byte-at-a-time hash that was 2% of a trace read over
  // kernel names of 200+ bytes. absl's own string hash takes them a word at a time.
  struct ViewHash {
    size_t operator()(std::string_view s) const {
      return absl::Hash<absl::string_view>{}(absl::string_view(s.data(), s.size()));
    }
  };
  std::deque<std::string> storage_;  // stable addresses for the string_view keys below
  absl::flat_hash_map<std::string_view, StringRef, ViewHash> by_value_;
  std::vector<const std::string*> dense_;                 // by ref, below kDenseRefs
  absl::flat_hash_map<StringRef, const std::string*> sparse_;  // the refs at or above it
  std::deque<std::pair<StringRef, const std::string*>> order_;
  StringRef next_ref_ = 1;
};

}  // namespace gpuspy
