#include "importers/kineto/bounded_strings.h"

namespace gpuspy::importers {

std::string_view CutToLimit(std::string_view value, std::string* scratch) {
  if (value.size() <= kMaxStringBytes) return value;
  size_t keep = kMaxStringBytes - kCutMarker.size();
  // Back to the first byte of a character (continuation bytes are 10xxxxxx).
  while (keep > 0 && (static_cast<unsigned char>(value[keep]) & 0xC0) == 0x80) --keep;
  scratch->assign(value.substr(0, keep));
  scratch->append(kCutMarker);
  return *scratch;
}

StringRef BoundedInterner::Intern(std::string_view value) {
  if (value.size() <= kMaxStringBytes) return strings_->Intern(value);
  ++cut_;
  return strings_->Intern(CutToLimit(value, &scratch_));
}

}  // namespace gpuspy::importers
