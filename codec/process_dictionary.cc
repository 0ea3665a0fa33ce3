#include "codec/process_dictionary.h"

#include "absl/strings/str_cat.h"

namespace gpuspy {
namespace {

// Inserts ref -> value, tolerating an identical redefinition (re-sent after a reconnect).
template <typename T, typename Eq>
absl::Status DefineRef(absl::flat_hash_map<uint32_t, T>& map, const char* table, uint32_t ref,
                       const T& value, Eq equal) {
  if (ref == 0) return absl::InvalidArgumentError(absl::StrCat(table, " ref 0 is reserved"));
  auto [it, inserted] = map.try_emplace(ref, value);
  if (!inserted && !equal(it->second, value)) {
    return absl::InvalidArgumentError(
        absl::StrCat(table, " ref ", ref, " redefined with a different value"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ProcessDictionary::Apply(const v1::Dictionary& defs) {
  for (const auto& s : defs.strings()) {
    if (s.ref() == 0) return absl::InvalidArgumentError("string ref 0 is reserved");
    if (absl::Status st = strings_.Define(s.ref(), s.value()); !st.ok()) return st;
  }
  auto require_string = [this](const char* what, uint32_t ref) -> absl::Status {
    if (strings_.Contains(ref)) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(what, " names unknown string ref ", ref));
  };
  for (const auto& d : defs.kernel_signatures()) {
    if (absl::Status st = require_string("kernel signature", d.name_ref()); !st.ok()) return st;
    KernelSignature sig{d.name_ref(),
                        {d.grid_x(), d.grid_y(), d.grid_z(), d.block_x(), d.block_y(),
                         d.block_z(), d.registers_per_thread(), d.static_shared_bytes(),
                         d.dynamic_shared_bytes()}};
    absl::Status st = DefineRef(signatures_, "kernel signature", d.ref(), sig,
                                [](const KernelSignature& a, const KernelSignature& b) {
                                  return a.name == b.name && a.shape == b.shape;
                                });
    if (!st.ok()) return st;
  }
  for (const auto& d : defs.streams()) {
    absl::Status st = DefineRef(streams_, "stream", d.ref(),
                                StreamKey{d.device_id(), d.context_id(), d.stream_id()},
                                std::equal_to<StreamKey>());
    if (!st.ok()) return st;
  }
  for (const auto& d : defs.threads()) {
    if (absl::Status st = require_string("thread", d.name_ref()); !st.ok()) return st;
    absl::Status st =
        DefineRef(threads_, "thread", d.ref(), d.os_thread_id(), std::equal_to<uint32_t>());
    if (!st.ok()) return st;
    if (d.name_ref() != 0) thread_names_[d.os_thread_id()] = d.name_ref();
  }
  for (const auto& d : defs.apis()) {
    if (absl::Status st = require_string("api", d.name_ref()); !st.ok()) return st;
    if (d.domain() < 0 || static_cast<uint32_t>(d.domain()) > 2) {
      return absl::InvalidArgumentError(absl::StrCat("api ref ", d.ref(), " has bad domain"));
    }
    ApiFunction fn{static_cast<ApiDomain>(d.domain()), d.cbid(), d.name_ref()};
    absl::Status st = DefineRef(apis_, "api", d.ref(), fn,
                                [](const ApiFunction& a, const ApiFunction& b) {
                                  return a.domain == b.domain && a.cbid == b.cbid &&
                                         a.name == b.name;
                                });
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

}  // namespace gpuspy
