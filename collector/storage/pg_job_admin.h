// The PostgreSQL store's job administration (`gpuspy jobs delete|rename`, `gpuspy import
// --replace`, imports pending until their last batch is in): what PostgresStore::DeleteProcesses and ::RenameJob run, each in one transaction on
// a pooled connection. Deleted rows leave dead tuples for autovacuum; unlike retention (which
// drops whole partitions) a delete is rare and small next to the data ingested.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collector/storage/pg_connection.h"
#include "collector/storage/store.h"

namespace gpuspy::collector {

// Store::DeleteProcesses: returns how many of `process_ids` existed (and are gone now).
absl::StatusOr<uint64_t> PgDeleteProcesses(PgConnection& conn, const std::vector<uint64_t>& process_ids);

// Store::RenameJob: NotFound for an unknown `from`, AlreadyExists when `to` has processes.
absl::StatusOr<uint64_t> PgRenameJob(PgConnection& conn, const std::string& from, const std::string& to);

// Store::SetJobStepPattern / GetJobStepPattern ("" = none; setting "" removes it).
absl::Status PgSetJobStepPattern(PgConnection& conn, const std::string& job_id, const std::string& pattern);
absl::StatusOr<std::string> PgGetJobStepPattern(PgConnection& conn, const std::string& job_id);

// Store::CommitImport: the process is listed from now on (committed durably).
absl::Status PgCommitImport(PgConnection& conn, uint64_t process_id);

// Store::DiscardPendingImport (the pending process with `process_key`), or every pending import
// (std::nullopt: the store opening). Returns how many processes were deleted.
absl::StatusOr<uint64_t> PgDiscardPendingImports(PgConnection& conn,
                                                 const std::optional<std::string>& process_key);

// Store::ReplaceSteps.
absl::Status PgReplaceSteps(PgConnection& conn, uint64_t process_id, const std::vector<StepRecord>& steps);

}  // namespace gpuspy::collector
