// A step's wall time split by cause (StepBreakdown.parts), the one split every screen draws:
// the web viewer's bars, the CLI, the HTML report and the export.
//
//   compute        kernels running (union), less exposed communication
//   comm wait      exposed communication (no compute, copy or memset running) spent waiting in
//                  collectives for the last rank, and
//   comm transfer  the rest of it, moving data: the exposed time is split in the ratio of the
//                  step's comm_wait_ns to comm_transfer_ns (the cross-rank pass splits all
//                  collective time, not its exposed part). Both zero without cross-rank data.
//   copy           copies/memsets with no kernel running
//   sync, launch, input, host, cuda call
//                  GPU idle by cause (idle_attribution.h)
//   unexplained    GPU idle the attribution left without a cause, so the parts always add up
//                  to the wall time
#pragma once

#include "gpuspy/v1/report.pb.h"

namespace gpuspy::analysis {

// Replaces breakdown->parts with the split of its other fields. Call after the cross-rank pass,
// which sets the communication fields.
void SetTimeParts(v1::StepBreakdown* breakdown);

// The part of `cause` in `parts`, 0 when absent.
int64_t PartNs(const google::protobuf::RepeatedPtrField<v1::TimePart>& parts, v1::TimeCause cause);

}  // namespace gpuspy::analysis
