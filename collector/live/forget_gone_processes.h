// What gpuspyd keeps per process in memory (the device memory totals ingest adds up) outlives
// the process's data unless something drops it: a long-lived daemon otherwise kept up to 2 MiB
// for every process it ever saw, deleted or evicted.
#pragma once

#include "collector/live/connection_registry.h"
#include "collector/live/memory_totals.h"
#include "collector/storage/store.h"

namespace gpuspy::collector {

// Forgets the memory totals of processes the store holds no event of any more (retention
// evicted all their batches, their job was deleted, an unfinished import was replaced). A
// connected process is kept whatever the store says: its first batch may be on its way, and a
// pending import is listed nowhere yet. A process that registers and ends between the listing
// and the sweep loses its totals; its recent-step reports then read its memory events from the
// store, as without totals. Returns how many processes were forgotten (0 if the store failed).
size_t ForgetMemoryTotalsOfGoneProcesses(Store& store, const ConnectionRegistry& connections,
                                         MemoryTotals& totals);

}  // namespace gpuspy::collector
