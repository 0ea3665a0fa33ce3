// Stand-ins for dictionary definitions a batch needs but no stored batch carries any more.
//
// A process sends each definition once, with the first batch that uses it. When that batch is
// lost (a damaged or deleted segment), every later batch that uses the name fails to decode and was
// dropped whole: `--rebuild-index` after a lost segment kept 0 of 48,143 events (issue 34). With
// placeholders the events stay; only the lost names read "(lost definition)".
#pragma once

#include <cstddef>
#include <cstdint>

#include "codec/process_dictionary.h"
#include "gpuspy/v1/wire.pb.h"

namespace gpuspy {

// The string every placeholder names (kernel, API, thread) lives at this ref: the top of the ref
// space, which a producer numbering from 1 does not reach.
inline constexpr uint32_t kPlaceholderNameRef = UINT32_MAX;
inline constexpr char kPlaceholderName[] = "(lost definition)";

// Definitions for every ref that `batch` (columns and its own dictionary additions) uses and
// neither `known` nor the batch defines: strings, kernel signatures, streams, threads, APIs.
// Empty when nothing is missing. `count` (optional) is set to the number of refs stood in for.
v1::Dictionary PlaceholdersForUndefinedRefs(const v1::EventBatch& batch, const ProcessDictionary& known,
                                            size_t* count = nullptr);

}  // namespace gpuspy
