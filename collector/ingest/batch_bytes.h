// The bytes of a batch as its producer sent them, taken out of the ClientMessage that carried
// them, so the store keeps what arrived (store.h) instead of a re-serialized copy: re-serializing
// cost the ingest path a full encode of every batch, and its bytes need not be the producer's.
#pragma once

#include <string>

namespace gpuspy::collector {

// `client_message` is the serialized gpuspy.v1.ClientMessage whose parse has body `batch`. Turns
// it, in place, into the EventBatch bytes it carried and returns true. False, leaving it as it
// was, when the batch came in more than one field occurrence (protobuf merges them; no gpuspy
// producer sends that): the caller then stores the merged message serialized.
bool TakeBatchBytes(std::string* client_message);

}  // namespace gpuspy::collector
