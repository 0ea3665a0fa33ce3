// --json output of the CLI: a response message as indented JSON with the proto field names, in
// one of two styles (README, "Machine-readable output"):
//  - proto (--json): protobuf's canonical JSON mapping. It writes 64-bit integers as strings
//    (JavaScript's numbers lose precision above 2^53) and leaves out fields at their default.
//  - flat (--json=flat): the same names and nesting, every integer a JSON number and every
//    scalar field present (0, "", false when unset): what jq and pandas scripts want. Messages
//    are present when set; of a oneof, only the member that is set.
#pragma once

#include <string>

#include <google/protobuf/message.h>

#include <nlohmann/json.hpp>

#include "viewer/cli/commands.h"

namespace gpuspy::cli {

std::string ToJson(const google::protobuf::Message& m, JsonStyle style);
void PrintJson(const GlobalOptions& g, const google::protobuf::Message& m);
// An answer that is not a message (import's per-file accounting): the same in both styles, as
// it has no 64-bit integers as strings and no defaults to leave out.
void PrintJson(const nlohmann::ordered_json& j);

}  // namespace gpuspy::cli
