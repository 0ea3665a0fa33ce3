#include "importers/kineto/json_tokens.h"

#include <cstring>

namespace gpuspy::importers {
namespace {

using simdjson::error_code;

// The DOM's nesting buffers are sized by depth; only stage 1 runs here, which never uses them.
constexpr size_t kUnusedDepth = 1;

}  // namespace

JsonTokens::JsonTokens() = default;
JsonTokens::~JsonTokens() = default;

error_code JsonTokens::Reserve(size_t bytes) {
  if (stage1_ == nullptr) {
    return simdjson::get_active_implementation()->create_dom_parser_implementation(bytes, kUnusedDepth,
                                                                                   stage1_);
  }
  if (stage1_->capacity() >= bytes) return simdjson::SUCCESS;
  return stage1_->set_capacity(bytes);
}

error_code JsonTokens::Index(const char* buf, size_t len) {
  buf_ = buf;
  len_ = len;
  index_ = nullptr;
  count_ = at_ = 0;
  unescaped_used_ = 0;
  if (len > simdjson::SIMDJSON_MAXSIZE_BYTES) return simdjson::CAPACITY;
  if (error_code err = Reserve(len)) return err;
  if (error_code err = stage1_->stage1(reinterpret_cast<const uint8_t*>(buf), len,
                                       simdjson::stage1_mode::regular)) {
    return err;
  }
  index_ = stage1_->structural_indexes.get();
  count_ = stage1_->n_structural_indexes;
  has_escapes_ = std::memchr(buf, '\\', len) != nullptr;
  return simdjson::SUCCESS;
}

JsonScalar JsonTokens::Unescape(const char* text) {
  // Unescaped text is never longer than the document, so one buffer of its size (and simdjson's
  // padding, which its unescaping may write into) holds every string of it: views stay valid.
  const size_t need = len_ + simdjson::SIMDJSON_PADDING;
  if (unescaped_capacity_ < need) {
    unescaped_.reset(new (std::nothrow) uint8_t[need]);
    if (unescaped_ == nullptr) {
      unescaped_capacity_ = 0;
      return JsonScalar::Error(simdjson::MEMALLOC);
    }
    unescaped_capacity_ = need;
  }
  uint8_t* begin = unescaped_.get() + unescaped_used_;
  uint8_t* end = stage1_->parse_string(reinterpret_cast<const uint8_t*>(text), begin);
  if (end == nullptr) return JsonScalar::Error(simdjson::STRING_ERROR);
  unescaped_used_ += static_cast<size_t>(end - begin);
  ++at_;
  return JsonScalar::Text(
      std::string_view(reinterpret_cast<const char*>(begin), static_cast<size_t>(end - begin)));
}

error_code JsonTokens::Skip() {
  const char first = Peek();
  if (first != '{' && first != '[') {
    if (AtEnd() || first == '}' || first == ']' || first == ',' || first == ':') return MissingSeparator();
    ++at_;
    return simdjson::SUCCESS;
  }
  uint32_t depth = 0;
  do {
    if (AtEnd()) return simdjson::INCOMPLETE_ARRAY_OR_OBJECT;
    const char c = buf_[index_[at_]];
    if (c == '{' || c == '[') ++depth;
    else if (c == '}' || c == ']') --depth;
    ++at_;
  } while (depth > 0);
  return simdjson::SUCCESS;
}

}  // namespace gpuspy::importers
