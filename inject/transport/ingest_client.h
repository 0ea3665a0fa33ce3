// Forwarding header: this moved to client/transport/ingest_client.h (issue 17, item 2). Kept only while
// inject/core/event_pipeline.cc and tests/unit/event_pipeline_test.cc, reworked in parallel under item 3, still name
// the old path; delete it once they include client/transport/ingest_client.h.
#pragma once

#include "client/transport/ingest_client.h"
