// What a gzip file inflates to, learnt before any of it is inflated into memory, so that a gzip
// bomb over --max-trace-bytes is refused in bounded memory (issue 34 item 2: 10 GiB of zeros
// held 2 GiB, the whole limit, before its refusal).
//
// The trailer's ISIZE is the last member's size mod 2^32: exact only for a file of one member
// that cannot inflate to 4 GiB. A larger single-member file's ISIZE is tried when plausible (the
// inflate checks it); anything else is counted with zlib's streaming inflate into a small buffer
// (libdeflate, which inflates the text afterwards, has no streaming API).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace gpuspy::importers {

// Whether `p` starts with a gzip member's magic bytes (1f 8b).
bool IsGzip(std::span<const unsigned char> p);

// The inflated size of the gzip file `gz` as its trailer says, when that must be exact: a single
// member (no other member header anywhere in the file) of fewer than 2^32 / 1032 compressed bytes
// (deflate expands at most ~1032:1, so ISIZE cannot have wrapped). A damaged trailer can still
// lie: the inflate that follows checks ISIZE and the CRC.
std::optional<uint64_t> ExactTrailerSize(std::span<const unsigned char> gz);

// The trailer's ISIZE of a single-member file too large for ExactTrailerSize, when it is a size a
// trace of that many compressed bytes plausibly has (between 1x and 64x of them): the size to
// inflate into first. Not a promise: ISIZE is mod 2^32 and may lie, so the inflate into it must
// fill it exactly, or the file is counted (CountInflatedBytes) and inflated again. What a lie
// costs is bounded by the claim: at most 64x the file, never over the limit.
std::optional<uint64_t> PlausibleTrailerSize(std::span<const unsigned char> gz);

struct InflatedCount {
  uint64_t bytes = 0;         // inflated bytes counted; counting stops once past the limit
  bool over_limit = false;    // more than the limit
  bool damaged = false;       // a member does not inflate (truncated or corrupt deflate data)
  size_t member_offset = 0;   // where that member starts in `gz`
};

// Inflates the concatenated gzip members of `gz` (as many as follow each other, like gzip -d)
// only to count their bytes, in ~100 KiB of memory whatever the file holds, stopping as soon as
// the count passes `limit_bytes`. The members' CRC-32 and ISIZE are not checked: the inflate that
// uses the count checks them.
InflatedCount CountInflatedBytes(std::span<const unsigned char> gz, uint64_t limit_bytes);

// The first `max_bytes` (or fewer, when the text is shorter or damaged) of what the gzip file
// `gz` inflates to, in bounded memory: enough to tell text that cannot be a trace.
std::string InflatedHead(std::span<const unsigned char> gz, size_t max_bytes);

}  // namespace gpuspy::importers
