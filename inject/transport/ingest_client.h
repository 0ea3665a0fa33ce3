// Forwarding header: moved to client/transport/ingest_client.h (issue 17, item 2). Kept only while
// event_pipeline.cc and tests/unit/event_pipeline_test.cc, reworked in parallel (item 3), name the
// old path; delete it once they include the new one.
#pragma once

#include "client/transport/ingest_client.h"
