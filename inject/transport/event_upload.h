// Sends a finished set of events (a replayed or imported process) to gpuspyd in one session:
// Hello, one batch per chunk with every acknowledgement awaited, clean close.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gpuspy/v1/identity.pb.h"
#include "model/events.h"
#include "model/string_table.h"

namespace gpuspy {

struct UploadResult {
  size_t events = 0;
  size_t batches = 0;
  size_t wire_bytes = 0;
};

absl::StatusOr<UploadResult> UploadEvents(const std::string& address,
                                          const v1::ProcessIdentity& identity,
                                          const StringTable& strings,
                                          const std::vector<EventColumns>& chunks,
                                          absl::Duration ack_timeout = absl::Seconds(30));

}  // namespace gpuspy
