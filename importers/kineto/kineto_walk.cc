#include "importers/kineto/kineto_walk.h"

#include <charconv>
#include <string>
#include <vector>

#include "importers/kineto/literal_match.h"
#include "importers/kineto/op_work.h"

namespace gpuspy::importers {
namespace {

using simdjson::error_code;

// The integers of "grid"/"block": scalars of an array (or object) that read as integers.
error_code ReadInts(JsonTokens& t, std::vector<int64_t>* out) {
  auto add = [&]() -> error_code {
    const JsonScalar value = t.Scalar();
    if (value.error()) return value.error();
    if (value.is_container()) return t.Skip();
    int64_t n = 0;
    if (ToInt(value.text(), &n)) out->push_back(n);
    return simdjson::SUCCESS;
  };
  if (t.Peek() == '[') return t.ForEachItem(add);
  return t.ForEachField([&](std::string_view) { return add(); });
}

// "Input Dims": an array per input, of integers (a tensor's dims) or empty (a scalar, a list).
// An input that is not an array has no dims.
error_code ReadInputDims(JsonTokens& t, RawEvent* e) {
  return t.ForEachItem([&]() -> error_code {
    if (t.Peek() == '[') {
      if (error_code err = ReadInts(t, &e->input_dims)) return err;
    } else if (error_code err = t.Skip()) {
      return err;
    }
    e->input_dim_ends.push_back(static_cast<uint32_t>(e->input_dims.size()));
    return simdjson::SUCCESS;
  });
}

// "Input type": a type name per input ("float", "Scalar", "").
error_code ReadInputTypes(JsonTokens& t, RawEvent* e) {
  return t.ForEachItem([&]() -> error_code {
    const JsonScalar value = t.Scalar();
    if (value.error()) return value.error();
    e->input_types.push_back(value.is_container() ? std::string_view() : value.text());
    return value.is_container() ? t.Skip() : simdjson::SUCCESS;
  });
}

// Whether the event is an op whose shapes the mapping reads (the category and name come before
// the args in what Kineto writes; an event that says them later has its shapes read anyway).
bool WantsShapes(const RawEvent& e) {
  return (e.cat.empty() || Matches(e.cat, "cpu_op") || Matches(e.cat, "Operator")) && (e.name.empty() || IsWorkOp(e.name));
}

error_code ReadArgs(JsonTokens& t, RawEvent* e) {
  return t.ForEachField([&](std::string_view key) -> error_code {
    const char next = t.Peek();
    if ((Matches(key, "grid") || Matches(key, "block")) && (next == '[' || next == '{')) {
      return ReadInts(t, Matches(key, "grid") ? &e->grid : &e->block);
    }
    if (next == '[' && (Matches(key, "Input Dims") || Matches(key, "Input type")) && WantsShapes(*e)) {
      if (Matches(key, "Input Dims")) {
        e->input_dims.clear();
        e->input_dim_ends.clear();
        return ReadInputDims(t, e);
      }
      e->input_types.clear();
      return ReadInputTypes(t, e);
    }
    const JsonScalar value = t.Scalar();
    if (value.error()) return value.error();
    if (value.is_container()) return t.Skip();
    e->args.emplace_back(key, value.text());
    return simdjson::SUCCESS;
  });
}

error_code ReadEvent(JsonTokens& t, RawEvent* e) {
  return t.ForEachField([&](std::string_view key) -> error_code {
    // By length first: every event has these few keys, and most compares then fail on size.
    std::string_view* slot = nullptr;
    switch (key.size()) {
      case 2:
        if (Matches(key, "ph")) slot = &e->ph;
        else if (Matches(key, "ts")) slot = &e->ts;
        break;
      case 3:
        if (Matches(key, "cat")) slot = &e->cat;
        else if (Matches(key, "dur")) slot = &e->dur;
        else if (Matches(key, "pid")) slot = &e->pid;
        else if (Matches(key, "tid")) slot = &e->tid;
        break;
      case 4:
        if (Matches(key, "name")) slot = &e->name;
        else if (Matches(key, "args") && t.Peek() == '{') return ReadArgs(t, e);
        break;
      default:
        break;
    }
    if (slot == nullptr) return t.Skip();  // id, bp, s, ...: not read
    const JsonScalar value = t.Scalar();
    if (value.error()) return value.error();
    if (value.is_container()) return t.Skip();
    *slot = value.text();
    return simdjson::SUCCESS;
  });
}

error_code ReadDevice(JsonTokens& t, v1::Device* d) {
  return t.ForEachField([&](std::string_view key) -> error_code {
    const JsonScalar value = t.Scalar();
    if (value.error()) return value.error();
    if (value.is_container()) return t.Skip();
    const std::string_view text = value.text();
    int64_t n = 0;
    if (Matches(key, "id") && ToInt(text, &n)) d->set_id(static_cast<uint32_t>(n));
    else if (Matches(key, "name")) d->set_name(std::string(text));
    else if (Matches(key, "totalGlobalMem") && ToInt(text, &n)) d->set_global_memory_bytes(n);
    else if (Matches(key, "computeMajor") && ToInt(text, &n)) d->set_compute_capability_major(n);
    else if (Matches(key, "computeMinor") && ToInt(text, &n)) d->set_compute_capability_minor(n);
    else if (Matches(key, "numSms") && ToInt(text, &n)) d->set_sm_count(static_cast<uint32_t>(n));
    return simdjson::SUCCESS;
  });
}

// A JSON number that is a whole uint64 as JSON writes one (no sign, fraction, exponent or
// leading zero); anything else is not a count.
bool ToCount(std::string_view text, uint64_t* out) {
  if (text.empty() || (text.size() > 1 && text[0] == '0')) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

error_code KinetoWalk::Root(JsonTokens& t) {
  return t.ForEachField([&](std::string_view key) -> error_code {
    const char next = t.Peek();
    if (Matches(key, "traceEvents") && next == '[') return TraceEvents(t);
    if (Matches(key, "deviceProperties") && next == '[') return Devices(t);
    if (Matches(key, "distributedInfo") && next == '{') return Distributed(t);
    if (Matches(key, "gpuspyNotExported") && next == '{') return NotExported(t);
    if (Matches(key, "baseTimeNanoseconds")) {
      const JsonScalar value = t.Scalar();
      if (value.error()) return value.error();
      if (value.is_container()) return t.Skip();
      mapper_->SetBase(value.text());
      return simdjson::SUCCESS;
    }
    return t.Skip();
  });
}

error_code KinetoWalk::Entry(JsonTokens& t) {
  if (t.Peek() != '{') return t.Skip();
  raw_.Clear();
  if (error_code err = ReadEvent(t, &raw_)) return err;
  ++out_->stats.trace_events;
  mapper_->Map(raw_);
  return simdjson::SUCCESS;
}

error_code KinetoWalk::TraceEvents(JsonTokens& t) {
  return t.ForEachItem([&] { return Entry(t); });
}

error_code KinetoWalk::NotExported(JsonTokens& t) {
  return t.ForEachField([&](std::string_view what) -> error_code {
    const char first = t.Peek();
    const JsonScalar value = t.Scalar();
    if (value.error()) return value.error();
    if (value.is_container()) return t.Skip();
    uint64_t n = 0;
    if (first >= '0' && first <= '9' && ToCount(value.text(), &n)) out_->stats.not_exported[std::string(what)] += n;
    return simdjson::SUCCESS;
  });
}

error_code KinetoWalk::Devices(JsonTokens& t) {
  return t.ForEachItem([&]() -> error_code {
    if (t.Peek() != '{') return t.Skip();
    v1::Device device;
    if (error_code err = ReadDevice(t, &device)) return err;
    out_->identity.add_devices()->Swap(&device);
    return simdjson::SUCCESS;
  });
}

error_code KinetoWalk::Distributed(JsonTokens& t) {
  return t.ForEachField([&](std::string_view key) -> error_code {
    const JsonScalar value = t.Scalar();
    if (value.error()) return value.error();
    if (value.is_container()) return t.Skip();
    int64_t n = 0;
    if (!ToInt(value.text(), &n)) return simdjson::SUCCESS;
    if (Matches(key, "rank")) out_->identity.set_rank(static_cast<int32_t>(n));
    else if (Matches(key, "world_size")) out_->identity.set_world_size(static_cast<int32_t>(n));
    return simdjson::SUCCESS;
  });
}

}  // namespace gpuspy::importers
