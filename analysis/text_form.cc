#include "analysis/text_form.h"

namespace gpuspy::analysis {
namespace {

// A qualified name ("at::native::GeluType") is one word: cut inside it, "at…" reads as garbled.
bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == ':' || static_cast<unsigned char>(c) >= 0x80;  // part of a UTF-8 sequence: never split
}

// Separators that read as dangling at the end of a shortened name.
bool IsTrailingSeparator(char c) { return c == ' ' || c == ',' || c == ':' || c == '<' || c == '('; }

}  // namespace

std::string CountOf(uint64_t n, std::string_view singular, std::string_view plural) {
  return std::to_string(n) + " " + std::string(n == 1 ? singular : plural);
}

std::string ClipName(std::string_view name, size_t max_chars) {
  if (name.size() <= max_chars) return std::string(name);
  size_t cut = max_chars;
  // Back up to a boundary: the cut must not fall between two word characters.
  while (cut > 0 && IsWordChar(name[cut - 1]) && IsWordChar(name[cut])) --cut;
  while (cut > 0 && IsTrailingSeparator(name[cut - 1])) --cut;
  // Nothing but one long identifier (or a separator run) before the limit: cut inside it.
  if (cut == 0) {
    cut = max_chars;
    while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
  }
  return std::string(name.substr(0, cut)) + "…";
}

}  // namespace gpuspy::analysis
