// Requests whose framing two HTTP parsers could read differently (RFC 9112 §6.3, §5.1): a proxy
// in front of gpuspyd and httplib would disagree on where the request ends, and the rest of the
// body would run as a request of its own (request smuggling). They are refused with 400 and the
// connection is closed (http_api.cc, guarded_server.h).
#pragma once

#include "absl/status/status.h"
#include "httplib.h"

namespace gpuspy::collector {

// InvalidArgument, saying why, for: Transfer-Encoding together with Content-Length; more than
// one Content-Length (or one that is not a number); a Transfer-Encoding other than exactly
// "chunked" (the only coding httplib decodes); whitespace in or empty header names ("Transfer-
// Encoding :").
absl::Status CheckRequestFraming(const httplib::Request& req);

}  // namespace gpuspy::collector
