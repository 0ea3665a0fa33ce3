#include "collector/query/job_admin.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace gpuspy::collector {
namespace {

bool IsSha256Hex(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace

absl::StatusOr<v1::FindImportsResponse> JobAdmin::FindImports(const v1::FindImportsRequest& request) const {
  if (request.content_sha256_size() > kMaxImportHashes) {
    return absl::InvalidArgumentError(absl::StrCat("more than ", kMaxImportHashes, " files in one import"));
  }
  v1::FindImportsResponse out;
  for (const std::string& hash : request.content_sha256()) {
    if (!IsSha256Hex(hash)) {
      return absl::InvalidArgumentError("content_sha256 must be 64 lowercase hex digits");
    }
    absl::StatusOr<std::vector<ProcessRecord>> found = store_->FindByContentHash(hash);
    if (!found.ok()) return found.status();
    for (const ProcessRecord& p : *found) {
      v1::ImportMatch* m = out.add_matches();
      m->set_content_sha256(hash);
      m->set_job_id(p.identity.job_id());
      m->set_process_id(p.process_id);
    }
  }
  return out;
}

absl::StatusOr<v1::DeleteJobResponse> JobAdmin::DeleteJob(const v1::DeleteJobRequest& request) {
  const std::string& job = request.job_id();
  if (job.empty()) return absl::InvalidArgumentError("a job id is required");
  absl::StatusOr<std::vector<ProcessRecord>> processes = store_->ListProcesses(job);
  if (!processes.ok()) return processes.status();
  if (processes->empty()) return absl::NotFoundError(absl::StrCat("unknown job '", job, "'"));
  if (!request.process_ids().empty()) {
    for (uint64_t id : request.process_ids()) {
      if (std::none_of(processes->begin(), processes->end(),
                       [id](const ProcessRecord& p) { return p.process_id == id; })) {
        return absl::NotFoundError(absl::StrCat("job '", job, "' has no process ", id));
      }
    }
    std::erase_if(*processes, [&](const ProcessRecord& p) {
      return std::find(request.process_ids().begin(), request.process_ids().end(), p.process_id) ==
             request.process_ids().end();
    });
  }
  std::vector<uint64_t> ids;
  uint64_t events = 0;
  size_t live = 0;
  for (const ProcessRecord& p : *processes) {
    ids.push_back(p.process_id);
    events += p.event_count;
    if (connections_ != nullptr && connections_->IsConnected(p.process_id)) ++live;
  }
  if (live > 0 && !request.force()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job '", job, "' is live: ", live, " of its processes are still connected; delete it once "
        "they end, or force it (gpuspy jobs delete --force; their later events start a new record)"));
  }
  absl::StatusOr<uint64_t> deleted = store_->DeleteProcesses(ids);
  if (!deleted.ok()) return deleted.status();
  if (memory_totals_ != nullptr) {
    for (uint64_t id : ids) memory_totals_->Forget(id);
  }
  // The whole job gone: its step pattern goes too, lest a new job of that name inherit it.
  // (`import --replace` deletes processes by id and keeps the job's pattern.)
  if (request.process_ids().empty() && patterns_ != nullptr) {
    if (absl::Status st = patterns_->Set(job, ""); !st.ok()) return st;
  }
  v1::DeleteJobResponse out;
  out.set_processes_deleted(static_cast<uint32_t>(*deleted));
  out.set_events_deleted(events);
  return out;
}

absl::StatusOr<v1::RenameJobResponse> JobAdmin::RenameJob(const v1::RenameJobRequest& request) {
  const std::string& from = request.job_id();
  const std::string& to = request.new_job_id();
  if (from.empty() || to.empty()) return absl::InvalidArgumentError("both the job id and the new job id are required");
  if (from == to) return absl::InvalidArgumentError(absl::StrCat("job '", from, "' has that name already"));
  if (connections_ != nullptr) {
    if (const size_t live = connections_->Live(from).size(); live > 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "job '", from, "' is live: ", live, " of its processes are still connected and would bring "
          "the old name back when they reconnect; rename it once they end"));
    }
  }
  absl::StatusOr<uint64_t> moved = store_->RenameJob(from, to);
  if (!moved.ok()) return moved.status();
  if (patterns_ != nullptr) {
    patterns_->Forget(from);
    patterns_->Forget(to);
  }
  v1::RenameJobResponse out;
  out.set_processes_moved(static_cast<uint32_t>(*moved));
  return out;
}

}  // namespace gpuspy::collector
