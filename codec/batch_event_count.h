// How many events a wire batch holds, from its column lengths alone: what producers count (a
// dropped batch, a delivered spill) without linking the collector-side decoder.
#pragma once

#include <cstddef>

#include "gpuspy/v1/wire.pb.h"

namespace gpuspy {

// Number of events in a batch, from column lengths alone (no validation).
size_t CountEvents(const v1::EventBatch& batch);

}  // namespace gpuspy
