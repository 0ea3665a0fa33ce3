#include "model/string_table.h"

#include "absl/strings/str_cat.h"

namespace gpuspy {

StringTable& StringTable::operator=(const StringTable& other) {
  if (this == &other) return *this;
  storage_.clear();
  by_value_.clear();
  by_ref_.clear();
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
  while (by_ref_.contains(next_ref_)) ++next_ref_;
  const StringRef ref = next_ref_++;
  const std::string* stored = &storage_.emplace_back(value);
  by_value_.emplace(*stored, ref);
  by_ref_.emplace(ref, stored);
  order_.emplace_back(ref, stored);
  return ref;
}

absl::Status StringTable::Define(StringRef ref, std::string_view value) {
  if (ref == 0) {
    if (value.empty()) return absl::OkStatus();
    return absl::InvalidArgumentError("string ref 0 is reserved for the empty string");
  }
  if (auto it = by_ref_.find(ref); it != by_ref_.end()) {
    if (*it->second == value) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("string ref ", ref, " redefined with a different value"));
  }
  const std::string* stored = &storage_.emplace_back(value);
  by_value_.try_emplace(*stored, ref);
  by_ref_.emplace(ref, stored);
  order_.emplace_back(ref, stored);
  if (ref >= next_ref_) next_ref_ = ref + 1;
  return absl::OkStatus();
}

std::string_view StringTable::Get(StringRef ref) const {
  if (auto it = by_ref_.find(ref); it != by_ref_.end()) return *it->second;
  return {};
}

StringRef StringTable::Find(std::string_view value) const {
  if (auto it = by_value_.find(value); it != by_value_.end()) return it->second;
  return 0;
}

}  // namespace gpuspy
