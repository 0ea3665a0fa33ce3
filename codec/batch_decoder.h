// Compact wire batches -> model events, collector side. Everything here treats the batch as
// untrusted input: column lengths, refs and enum values are validated, never assumed.
#pragma once

#include "absl/status/status.h"
#include "codec/batch_event_count.h"  // CountEvents, for the decoder's callers
#include "codec/process_dictionary.h"
#include "gpuspy/v1/wire.pb.h"
#include "model/events.h"

namespace gpuspy {

// Decodes `batch` (whose own dictionary must already be applied to `dict`) and appends its events
// to `out`. On error `out` is left unchanged and the status names the column and index at fault.
absl::Status DecodeBatch(const v1::EventBatch& batch, const ProcessDictionary& dict,
                         EventColumns* out);

}  // namespace gpuspy
