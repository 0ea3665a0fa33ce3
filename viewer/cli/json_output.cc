#include "viewer/cli/json_output.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>
#include <google/protobuf/util/json_util.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "absl/strings/escaping.h"
#include "gpuspy/v1/report.pb.h"

namespace gpuspy::cli {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using Json = nlohmann::ordered_json;  // fields in declaration order, as the proto style

std::string ProtoJson(const Message& m) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(m, &json, options);
  return json;
}

Json FlatMessage(const Message& m);

bool ReplacedAString(const google::protobuf::EnumDescriptor* e) {
  return e == v1::Detector_descriptor() || e == v1::Severity_descriptor();
}

// One value of `f` (element `index` when repeated, else -1).
Json FlatValue(const Message& m, const FieldDescriptor* f, int index) {
  const Reflection* r = m.GetReflection();
  const bool rep = index >= 0;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f);
    case FieldDescriptor::CPPTYPE_INT64:
      return rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f);
    case FieldDescriptor::CPPTYPE_UINT32:
      return rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f);
    case FieldDescriptor::CPPTYPE_UINT64:
      return rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f);
    case FieldDescriptor::CPPTYPE_DOUBLE:  // NaN and infinities dump as null
      return rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f);
    case FieldDescriptor::CPPTYPE_FLOAT:
      return rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f);
    case FieldDescriptor::CPPTYPE_BOOL:
      return rep ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f);
    case FieldDescriptor::CPPTYPE_ENUM: {
      const int number = rep ? r->GetRepeatedEnumValue(m, f, index) : r->GetEnumValue(m, f);
      // Detector and severity were strings: unset, they print as the "" scripts already read.
      if (number == 0 && ReplacedAString(f->enum_type())) return "";
      const auto* value = f->enum_type()->FindValueByNumber(number);
      return value != nullptr ? Json(value->name()) : Json(number);
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      std::string s = rep ? r->GetRepeatedString(m, f, index) : r->GetString(m, f);
      // As the proto mapping: bytes as base64. (Text that is not UTF-8 is replaced at the dump.)
      if (f->type() == FieldDescriptor::TYPE_BYTES) return absl::Base64Escape(s);
      return s;
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return FlatMessage(rep ? r->GetRepeatedMessage(m, f, index) : r->GetMessage(m, f));
  }
  return nullptr;
}

Json FlatMessage(const Message& m) {
  // The well-known JSON types (Struct, Value, ListValue) are JSON already.
  if (m.GetDescriptor()->file()->name().rfind("google/protobuf/", 0) == 0) {
    Json j = Json::parse(ProtoJson(m), nullptr, /*allow_exceptions=*/false);
    return j.is_discarded() ? Json(nullptr) : j;
  }
  const Reflection* r = m.GetReflection();
  Json out = Json::object();
  const auto* d = m.GetDescriptor();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (f->is_repeated()) {
      Json list = Json::array();
      for (int k = 0; k < r->FieldSize(m, f); ++k) list.push_back(FlatValue(m, f, k));
      out[f->name()] = std::move(list);
      continue;
    }
    const bool optional = f->containing_oneof() != nullptr ||
                          f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;
    if (optional && !r->HasField(m, f)) continue;
    out[f->name()] = FlatValue(m, f, -1);
  }
  return out;
}

// Indented as the proto style; text that is not UTF-8 is replaced, never an exception.
std::string Dump(const Json& j) { return j.dump(2, ' ', false, Json::error_handler_t::replace); }

}  // namespace

std::string ToJson(const Message& m, JsonStyle style) {
  std::string json = style == JsonStyle::kFlat ? Dump(FlatMessage(m)) : ProtoJson(m);
  while (!json.empty() && json.back() == '\n') json.pop_back();
  return json;
}

void PrintJson(const GlobalOptions& g, const Message& m) {
  std::cout << ToJson(m, g.json_style) << "\n";
}

void PrintJson(const Json& j) { std::cout << Dump(j) << "\n"; }

}  // namespace gpuspy::cli
