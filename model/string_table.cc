#include "model/string_table.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace gpuspy {

StringTable& StringTable::operator=(const StringTable& other) {
  if (this == &other) return *this;
  storage_.clear();
  by_value_.clear();
  dense_.clear();
  sparse_.clear();
  order_.clear();
  next_ref_ = 1;
  other.ForEach([this](StringRef ref, const std::string& value) {
    (void)Define(ref, value);
  });
  next_ref_ = other.next_ref_;
  return *this;
}

StringRef StringTable::Intern(std::string_view value) {
  if (value.empty()) return 0;
  if (auto it = by_value_.find(value); it != by_value_.end()) return it->second;
  while (Lookup(next_ref_) != nullptr) ++next_ref_;
  const StringRef ref = next_ref_++;
  const std::string* stored = &storage_.emplace_back(value);
  by_value_.emplace(*stored, ref);
  Remember(ref, stored);
  order_.emplace_back(ref, stored);
  return ref;
}

absl::Status StringTable::Define(StringRef ref, std::string_view value) {
  if (ref == 0) {
    if (value.empty()) return absl::OkStatus();
    return absl::InvalidArgumentError("string ref 0 is reserved for the empty string");
  }
  if (const std::string* known = Lookup(ref); known != nullptr) {
    if (*known == value) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("string ref ", ref, " redefined with a different value"));
  }
  const std::string* stored = &storage_.emplace_back(value);
  by_value_.try_emplace(*stored, ref);
  Remember(ref, stored);
  order_.emplace_back(ref, stored);
  if (ref >= next_ref_) next_ref_ = ref + 1;
  return absl::OkStatus();
}

std::string_view StringTable::Get(StringRef ref) const {
  const std::string* value = Lookup(ref);
  return value == nullptr ? std::string_view() : std::string_view(*value);
}

void StringTable::Remember(StringRef ref, const std::string* value) {
  if (ref >= kDenseRefs) {
    sparse_.emplace(ref, value);
    return;
  }
  // Grown to the ref (in sequence: one past the end), doubling, never past kDenseRefs.
  if (ref >= dense_.size()) dense_.resize(std::min<size_t>(kDenseRefs, std::max<size_t>(ref + 1, 2 * dense_.size())), nullptr);
  dense_[ref] = value;
}

StringRef StringTable::Find(std::string_view value) const {
  if (auto it = by_value_.find(value); it != by_value_.end()) return it->second;
  return 0;
}

}  // namespace gpuspy
