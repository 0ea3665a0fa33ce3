#include "viewer/cli/json_output.h"

#include <google/protobuf/util/json_util.h>

#include <iostream>
#include <string>

namespace gpuspy::cli {

void PrintJson(const google::protobuf::Message& m) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(m, &json, options);
  std::cout << json;
  if (json.empty() || json.back() != '\n') std::cout << "\n";
}

}  // namespace gpuspy::cli
