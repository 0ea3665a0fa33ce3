// Forwarding header: moved to client/spill/spill_file.h (issue 17, item 2). Kept only
// while event_pipeline.h, reworked in parallel (item 3), name the old path; delete
// it once they include the new one.
#pragma once

#include "client/spill/spill_file.h"
