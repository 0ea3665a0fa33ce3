#include "codec/dictionary_placeholders.h"

#include <set>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace gpuspy {
namespace {

// The refs a batch uses, by table, in ref order (a deterministic dictionary chunk).
struct UsedRefs {
  std::set<uint32_t> strings, signatures, streams, threads, apis;
};

template <typename Column>
void AddAll(const Column& column, std::set<uint32_t>* out) {
  out->insert(column.begin(), column.end());
}

UsedRefs RefsOf(const v1::EventBatch& b) {
  UsedRefs u;
  AddAll(b.kernels().signature_ref(), &u.signatures);
  for (const auto* streams : {&b.kernels().stream_ref(), &b.memcpys().stream_ref(), &b.memsets().stream_ref(),
                              &b.syncs().stream_ref(), &b.memory().stream_ref(), &b.graph_launches().stream_ref()}) {
    AddAll(*streams, &u.streams);
  }
  AddAll(b.apis().api_ref(), &u.apis);
  for (const auto* threads : {&b.apis().thread_ref(), &b.nvtx_ranges().thread_ref(), &b.nvtx_marks().thread_ref(),
                              &b.overheads().thread_ref(), &b.op_works().thread_ref()}) {
    AddAll(*threads, &u.threads);
  }
  for (const auto* strings : {&b.apis().call_site_ref(), &b.nvtx_ranges().domain_ref(), &b.nvtx_ranges().message_ref(),
                              &b.nvtx_marks().domain_ref(), &b.nvtx_marks().message_ref(), &b.overheads().kind_ref(),
                              &b.collectives().op_ref(), &b.collectives().dtype_ref(), &b.collectives().group_ref(),
                              &b.op_works().op_ref(), &b.op_works().dtype_ref()}) {
    AddAll(*strings, &u.strings);
  }
  // The batch's own definitions may name strings an earlier, lost batch defined.
  for (const auto& d : b.dictionary().kernel_signatures()) u.strings.insert(d.name_ref());
  for (const auto& d : b.dictionary().threads()) u.strings.insert(d.name_ref());
  for (const auto& d : b.dictionary().apis()) u.strings.insert(d.name_ref());
  return u;
}

template <typename Defs>
absl::flat_hash_set<uint32_t> DefinedRefs(const Defs& defs) {
  absl::flat_hash_set<uint32_t> out;
  for (const auto& d : defs) out.insert(d.ref());
  return out;
}

}  // namespace

v1::Dictionary PlaceholdersForUndefinedRefs(const v1::EventBatch& batch, const ProcessDictionary& known,
                                            size_t* count) {
  const UsedRefs used = RefsOf(batch);
  const v1::Dictionary& own = batch.dictionary();
  const auto own_strings = DefinedRefs(own.strings());
  const auto own_signatures = DefinedRefs(own.kernel_signatures());
  const auto own_streams = DefinedRefs(own.streams());
  const auto own_threads = DefinedRefs(own.threads());
  const auto own_apis = DefinedRefs(own.apis());
  // Ref 0 means "none" in every table and cannot be defined: a batch using it is malformed, and
  // stays refused.
  auto missing = [](uint32_t ref, bool defined, const absl::flat_hash_set<uint32_t>& own_defs) {
    return ref != 0 && !defined && !own_defs.contains(ref);
  };
  v1::Dictionary out;
  size_t n = 0;
  for (uint32_t ref : used.strings) {
    if (ref == kPlaceholderNameRef || !missing(ref, known.strings().Contains(ref), own_strings)) continue;
    v1::StringDef* s = out.add_strings();
    s->set_ref(ref);
    // One value per ref: equal values would make the string table's reverse lookup ambiguous.
    s->set_value(absl::StrCat("(lost string ", ref, ")"));
    ++n;
  }
  for (uint32_t ref : used.signatures) {
    if (!missing(ref, known.signature(ref) != nullptr, own_signatures)) continue;
    v1::KernelSignatureDef* d = out.add_kernel_signatures();
    d->set_ref(ref);
    d->set_name_ref(kPlaceholderNameRef);
    ++n;
  }
  for (uint32_t ref : used.streams) {
    if (!missing(ref, known.stream(ref) != nullptr, own_streams)) continue;
    v1::StreamDef* d = out.add_streams();
    d->set_ref(ref);
    // Device 0, and a stream id counted down from the top so that a lost stream does not merge
    // with a real one.
    d->set_stream_id(UINT32_MAX - ref);
    ++n;
  }
  for (uint32_t ref : used.threads) {
    if (!missing(ref, known.thread(ref) != nullptr, own_threads)) continue;
    v1::ThreadDef* d = out.add_threads();
    d->set_ref(ref);
    d->set_name_ref(kPlaceholderNameRef);
    ++n;
  }
  for (uint32_t ref : used.apis) {
    if (!missing(ref, known.api(ref) != nullptr, own_apis)) continue;
    v1::ApiDef* d = out.add_apis();
    d->set_ref(ref);
    d->set_name_ref(kPlaceholderNameRef);
    ++n;
  }
  const bool names_placeholder = out.kernel_signatures_size() + out.threads_size() + out.apis_size() > 0;
  if (names_placeholder && !known.strings().Contains(kPlaceholderNameRef)) {
    v1::StringDef* s = out.add_strings();
    s->set_ref(kPlaceholderNameRef);
    s->set_value(kPlaceholderName);
  }
  if (count != nullptr) *count = n;
  return out;
}

}  // namespace gpuspy
