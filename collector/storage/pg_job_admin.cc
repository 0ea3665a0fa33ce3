#include "collector/storage/pg_job_admin.h"

#include <functional>

#include "absl/strings/str_cat.h"
#include "gpuspy/v1/identity.pb.h"

namespace gpuspy::collector {
namespace {

// Runs `body` in a transaction that commits durably: the pool's connections default to
// synchronous_commit=off (metadata made durable by the next batch commit, README), but a delete
// or rename lost to a database crash would bring back what the user was told is gone.
template <typename T>
absl::StatusOr<T> InTransaction(PgConnection& conn, const std::function<absl::StatusOr<T>()>& body) {
  if (absl::Status st = conn.Run("BEGIN; SET LOCAL synchronous_commit = on"); !st.ok()) return st;
  absl::StatusOr<T> out = body();
  absl::Status st = out.ok() ? conn.Run("COMMIT") : out.status();
  if (!st.ok()) {
    (void)conn.Run("ROLLBACK");
    return st;
  }
  return out;
}

// Deletes the processes `ids` with everything they own, in the caller's transaction; returns how
// many of them existed.
absl::StatusOr<uint64_t> DeleteProcessRows(PgConnection& conn, const std::vector<int64_t>& ids) {
  // The process rows first, FOR UPDATE: append_batch locks them too, so no batch of these
  // processes lands between the deletes below.
  PgParams lock;
  lock.IntArray(ids);
  absl::StatusOr<PgResult> locked = conn.Query(
      "SELECT process_id FROM processes WHERE process_id = ANY($1) FOR UPDATE", lock);
  if (!locked.ok()) return locked.status();
  for (const char* table : {"batches", "dictionary", "steps", "processes"}) {
    PgParams p;
    p.IntArray(ids);
    absl::StatusOr<PgResult> r =
        conn.Query(absl::StrCat("DELETE FROM ", table, " WHERE process_id = ANY($1)"), p);
    if (!r.ok()) return r.status();
  }
  return static_cast<uint64_t>(locked->rows());
}

}  // namespace

absl::StatusOr<uint64_t> PgDeleteProcesses(PgConnection& conn, const std::vector<uint64_t>& process_ids) {
  std::vector<int64_t> ids(process_ids.begin(), process_ids.end());
  return InTransaction<uint64_t>(conn, [&]() { return DeleteProcessRows(conn, ids); });
}

absl::Status PgCommitImport(PgConnection& conn, uint64_t process_id) {
  // Durably (InTransaction): the sender hears its import is complete only after this commit.
  return InTransaction<bool>(conn, [&]() -> absl::StatusOr<bool> {
    PgParams p;
    p.Int(static_cast<int64_t>(process_id));
    absl::StatusOr<PgResult> r = conn.Query("UPDATE processes SET pending = false WHERE process_id = $1", p);
    if (!r.ok()) return r.status();
    return true;
  }).status();
}

absl::StatusOr<uint64_t> PgDiscardPendingImports(PgConnection& conn,
                                                 const std::optional<std::string>& process_key) {
  return InTransaction<uint64_t>(conn, [&]() -> absl::StatusOr<uint64_t> {
    PgParams p;
    if (process_key.has_value()) p.Text(*process_key);
    absl::StatusOr<PgResult> pending = conn.Query(
        process_key.has_value() ? "SELECT process_id FROM processes WHERE pending AND process_key = $1"
                                : "SELECT process_id FROM processes WHERE pending",
        p);
    if (!pending.ok()) return pending.status();
    if (pending->rows() == 0) return uint64_t{0};
    std::vector<int64_t> ids;
    for (int i = 0; i < pending->rows(); ++i) ids.push_back(pending->Int(i, 0));
    return DeleteProcessRows(conn, ids);
  });
}

absl::StatusOr<uint64_t> PgRenameJob(PgConnection& conn, const std::string& from, const std::string& to) {
  return InTransaction<uint64_t>(conn, [&]() -> absl::StatusOr<uint64_t> {
    // Two renames to the same new id must not both find it free: job ids have no table of their
    // own to hold a unique key, so the new id's advisory lock serializes them.
    PgParams key;
    key.Text(to);
    if (absl::StatusOr<PgResult> r = conn.Query("SELECT pg_advisory_xact_lock(hashtext($1))", key); !r.ok()) {
      return r.status();
    }
    PgParams taken;
    taken.Text(to);
    absl::StatusOr<PgResult> existing =
        conn.Query("SELECT 1 FROM processes WHERE job_id = $1 LIMIT 1", taken);
    if (!existing.ok()) return existing.status();
    if (existing->rows() > 0) return absl::AlreadyExistsError(absl::StrCat("job '", to, "' exists already"));
    PgParams old;
    old.Text(from);
    absl::StatusOr<PgResult> rows = conn.Query(
        "SELECT process_id, identity FROM processes WHERE job_id = $1 ORDER BY process_id FOR UPDATE", old);
    if (!rows.ok()) return rows.status();
    if (rows->rows() == 0) return absl::NotFoundError(absl::StrCat("unknown job '", from, "'"));
    for (int i = 0; i < rows->rows(); ++i) {
      v1::ProcessIdentity identity;
      const std::string_view blob = rows->Bytes(i, 1);
      if (!identity.ParseFromArray(blob.data(), static_cast<int>(blob.size()))) {
        return absl::DataLossError(absl::StrCat("process ", rows->Int(i, 0), ": identity unreadable"));
      }
      identity.set_job_id(to);
      std::string updated;
      identity.SerializeToString(&updated);
      PgParams p;
      p.Text(to).Bytes(updated).Int(rows->Int(i, 0));
      absl::StatusOr<PgResult> r =
          conn.Query("UPDATE processes SET job_id = $1, identity = $2 WHERE process_id = $3", p);
      if (!r.ok()) return r.status();
    }
    PgParams settings;
    settings.Text(to).Text(from);
    absl::StatusOr<PgResult> moved = conn.Query("UPDATE job_settings SET job_id = $1 WHERE job_id = $2", settings);
    if (!moved.ok()) return moved.status();
    return static_cast<uint64_t>(rows->rows());
  });
}

absl::Status PgSetJobStepPattern(PgConnection& conn, const std::string& job_id, const std::string& pattern) {
  PgParams p;
  p.Text(job_id);
  if (!pattern.empty()) p.Text(pattern);
  return InTransaction<bool>(conn, [&]() -> absl::StatusOr<bool> {
    absl::StatusOr<PgResult> r =
        pattern.empty() ? conn.Query("DELETE FROM job_settings WHERE job_id = $1", p)
                        : conn.Query("INSERT INTO job_settings(job_id, step_pattern) VALUES($1, $2) "
                                     "ON CONFLICT (job_id) DO UPDATE SET step_pattern = EXCLUDED.step_pattern", p);
    if (!r.ok()) return r.status();
    return true;
  }).status();
}

absl::StatusOr<std::string> PgGetJobStepPattern(PgConnection& conn, const std::string& job_id) {
  PgParams p;
  p.Text(job_id);
  absl::StatusOr<PgResult> r = conn.Query("SELECT step_pattern FROM job_settings WHERE job_id = $1", p);
  if (!r.ok()) return r.status();
  return r->rows() > 0 ? std::string(r->Bytes(0, 0)) : std::string();
}

absl::Status PgReplaceSteps(PgConnection& conn, uint64_t process_id, const std::vector<StepRecord>& steps) {
  std::vector<int64_t> number, start, end;
  std::vector<std::string> source;
  for (const StepRecord& s : steps) {
    number.push_back(s.number);
    start.push_back(s.start_ns);
    end.push_back(s.end_ns);
    source.push_back(s.source);
  }
  return InTransaction<bool>(conn, [&]() -> absl::StatusOr<bool> {
    PgParams del;
    del.Int(static_cast<int64_t>(process_id));
    if (absl::StatusOr<PgResult> r = conn.Query("DELETE FROM steps WHERE process_id = $1", del); !r.ok()) {
      return r.status();
    }
    if (steps.empty()) return true;
    PgParams p;
    p.Int(static_cast<int64_t>(process_id)).IntArray(number).IntArray(start).IntArray(end).TextArray(source);
    absl::StatusOr<PgResult> r = conn.Query(
        "INSERT INTO steps(process_id, number, start_ns, end_ns, source) SELECT $1, * FROM "
        "unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::text[]) ON CONFLICT (process_id, number) "
        "DO UPDATE SET start_ns = EXCLUDED.start_ns, end_ns = EXCLUDED.end_ns, source = EXCLUDED.source", p);
    if (!r.ok()) return r.status();
    return true;
  }).status();
}

}  // namespace gpuspy::collector
