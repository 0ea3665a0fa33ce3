// --json output of the CLI: a response message as indented JSON with the proto field names.
#pragma once

#include <google/protobuf/message.h>

namespace gpuspy::cli {

void PrintJson(const google::protobuf::Message& m);

}  // namespace gpuspy::cli
