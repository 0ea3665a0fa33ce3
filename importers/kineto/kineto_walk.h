// A Kineto trace's JSON grammar over a document's tokens (json_tokens.h): the root's keys
// (traceEvents, deviceProperties, distributedInfo, baseTimeNanoseconds, gpuspyNotExported) and
// each event's few fields, read in place into a RawEvent and handed to the mapping one at a time.
// Only the fields the mapping needs are read; the rest are skipped.
#pragma once

#include "importers/kineto/json_tokens.h"
#include "importers/kineto/kineto_mapping.h"
#include "importers/kineto/kineto_reader.h"

namespace gpuspy::importers {

class KinetoWalk {
 public:
  KinetoWalk(KinetoTrace* out, KinetoMapper* mapper) : out_(out), mapper_(mapper) {}

  // The root object at the cursor, whole.
  simdjson::error_code Root(JsonTokens& tokens);
  // One entry of traceEvents at the cursor: an object is an event (counted and mapped); any
  // other value is skipped, uncounted.
  simdjson::error_code Entry(JsonTokens& tokens);

 private:
  simdjson::error_code TraceEvents(JsonTokens& tokens);
  simdjson::error_code Devices(JsonTokens& tokens);
  simdjson::error_code Distributed(JsonTokens& tokens);
  simdjson::error_code NotExported(JsonTokens& tokens);

  KinetoTrace* out_;
  KinetoMapper* mapper_;
  RawEvent raw_;  // reused: its vectors keep their capacity from event to event
};

}  // namespace gpuspy::importers
