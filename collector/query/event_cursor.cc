#include "collector/query/event_cursor.h"

#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace gpuspy::collector {
namespace {

// Bumped when the token's meaning changes: an old token is then refused, not misread.
constexpr char kVersion[] = "e1";

// FNV-1a over what the cursor is only valid for. Stable across runs and builds (absl::Hash is
// salted per process, and a client may page across a gpuspyd restart); not a secret: the
// token only needs to catch mistakes, the query is checked against the job as usual.
uint64_t QueryFingerprint(const v1::GetEventsRequest& r) {
  const std::string key = absl::StrCat(r.job_id(), "\x1f", r.process_id(), "\x1f", r.from_ns(),
                                       "\x1f", r.to_ns());
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

absl::Status BadCursor(absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("bad cursor: ", why));
}

}  // namespace

std::string EncodeEventCursor(const EventCursor& cursor, const v1::GetEventsRequest& request) {
  return absl::WebSafeBase64Escape(absl::StrCat(kVersion, ".", cursor.process_id, ".",
                                                cursor.sequence, ".", cursor.skip, ".",
                                                QueryFingerprint(request)));
}

absl::StatusOr<EventCursor> DecodeEventCursor(const v1::GetEventsRequest& request) {
  std::string text;
  if (request.cursor().size() > 200 || !absl::WebSafeBase64Unescape(request.cursor(), &text)) {
    return BadCursor("not a cursor from this API (pass next_cursor back unchanged)");
  }
  const std::vector<std::string> parts = absl::StrSplit(text, '.');
  EventCursor c;
  uint64_t fingerprint = 0;
  if (parts.size() != 5 || parts[0] != kVersion || !absl::SimpleAtoi(parts[1], &c.process_id) ||
      !absl::SimpleAtoi(parts[2], &c.sequence) || !absl::SimpleAtoi(parts[3], &c.skip) ||
      !absl::SimpleAtoi(parts[4], &fingerprint) || c.process_id == 0) {
    return BadCursor("not a cursor from this API (pass next_cursor back unchanged)");
  }
  if (fingerprint != QueryFingerprint(request)) {
    return BadCursor(
        "it belongs to another query (keep the job, process, from and to of the first page)");
  }
  return c;
}

}  // namespace gpuspy::collector
