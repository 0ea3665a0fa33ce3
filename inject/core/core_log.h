// Forwarding header: this moved to client/log/log_line.h (issue 17, item 2). Kept only while
// inject/core/event_pipeline.* and cupti_capture.cc, reworked in parallel under item 3, still name
// the old path; delete it once they include client/log/log_line.h.
#pragma once

#include "client/log/log_line.h"
