#include "collector/auth/authorized_services.h"

#include <algorithm>

#include "collector/rpc/grpc_status.h"

namespace gpuspy::collector {
namespace {

// Attach requests name a few kinds of events; more is not a request gpuspy's CLI makes.
constexpr int kMaxAttachKinds = 64;

}  // namespace

grpc::Status AuthorizedQuery::ForJob(const grpc::ServerContext& context, const std::string& job_id,
                                     Permission needed) const {
  if (absl::Status st = CheckRequestString(job_id, "job_id"); !st.ok()) return ToGrpc(st);
  absl::StatusOr<Principal> p = access_->Authorize(context, needed);
  if (!p.ok()) return ToGrpc(p.status());
  return ToGrpc(access_->CheckJob(*p, job_id));
}

grpc::Status AuthorizedQuery::ListJobs(grpc::ServerContext* context, const v1::ListJobsRequest* request,
                                       v1::ListJobsResponse* response) {
  absl::StatusOr<Principal> p = access_->Authorize(*context, Permission::kQuery);
  if (!p.ok()) return ToGrpc(p.status());
  grpc::Status st = inner_->ListJobs(context, request, response);
  if (!st.ok() || !p->only_uid.has_value()) return st;
  auto* jobs = response->mutable_jobs();
  const uint32_t uid = *p->only_uid;
  // The same rule as CheckJob, on what is already loaded: every process of the job is the uid's.
  auto foreign = [uid](const v1::JobInfo& job) {
    return job.processes().empty() ||
           std::any_of(job.processes().begin(), job.processes().end(),
                       [uid](const v1::ProcessInfo& p) { return p.identity().uid() != uid; });
  };
  jobs->erase(std::remove_if(jobs->begin(), jobs->end(), foreign), jobs->end());
  return st;
}

grpc::Status AuthorizedQuery::ListSteps(grpc::ServerContext* context, const v1::ListStepsRequest* request,
                                        v1::ListStepsResponse* response) {
  if (grpc::Status st = ForJob(*context, request->job_id()); !st.ok()) return st;
  return inner_->ListSteps(context, request, response);
}

grpc::Status AuthorizedQuery::GetStepReport(grpc::ServerContext* context,
                                            const v1::GetStepReportRequest* request,
                                            v1::GetStepReportResponse* response) {
  if (grpc::Status st = ForJob(*context, request->job_id()); !st.ok()) return st;
  return inner_->GetStepReport(context, request, response);
}

grpc::Status AuthorizedQuery::GetJobSummary(grpc::ServerContext* context,
                                            const v1::GetJobSummaryRequest* request,
                                            v1::GetJobSummaryResponse* response) {
  if (grpc::Status st = ForJob(*context, request->job_id()); !st.ok()) return st;
  return inner_->GetJobSummary(context, request, response);
}

grpc::Status AuthorizedQuery::GetEvents(grpc::ServerContext* context, const v1::GetEventsRequest* request,
                                        v1::GetEventsResponse* response) {
  if (grpc::Status st = ForJob(*context, request->job_id()); !st.ok()) return st;
  return inner_->GetEvents(context, request, response);
}

grpc::Status AuthorizedQuery::GetStats(grpc::ServerContext* context, const v1::GetStatsRequest* request,
                                       v1::GetStatsResponse* response) {
  // Collector-wide counters, no job names: every caller who may query may read them.
  absl::StatusOr<Principal> p = access_->Authorize(*context, Permission::kQuery);
  if (!p.ok()) return ToGrpc(p.status());
  return inner_->GetStats(context, request, response);
}

grpc::Status AuthorizedQuery::GetRunProfile(grpc::ServerContext* context,
                                            const v1::GetRunProfileRequest* request,
                                            v1::GetRunProfileResponse* response) {
  if (grpc::Status st = ForJob(*context, request->job_id()); !st.ok()) return st;
  return inner_->GetRunProfile(context, request, response);
}

grpc::Status AuthorizedQuery::DiffRuns(grpc::ServerContext* context, const v1::DiffRunsRequest* request,
                                       v1::DiffRunsResponse* response) {
  if (grpc::Status st = ForJob(*context, request->a().job_id()); !st.ok()) return st;
  if (grpc::Status st = ForJob(*context, request->b().job_id()); !st.ok()) return st;
  return inner_->DiffRuns(context, request, response);
}

grpc::Status AuthorizedQuery::GetStepTimeline(grpc::ServerContext* context,
                                              const v1::GetStepTimelineRequest* request,
                                              v1::GetStepTimelineResponse* response) {
  if (grpc::Status st = ForJob(*context, request->job_id()); !st.ok()) return st;
  return inner_->GetStepTimeline(context, request, response);
}

grpc::Status AuthorizedQuery::FindImports(grpc::ServerContext* context,
                                          const v1::FindImportsRequest* request,
                                          v1::FindImportsResponse* response) {
  absl::StatusOr<Principal> p = access_->Authorize(*context, Permission::kQuery);
  if (!p.ok()) return ToGrpc(p.status());
  grpc::Status st = inner_->FindImports(context, request, response);
  if (!st.ok() || !p->only_uid.has_value()) return st;
  auto* matches = response->mutable_matches();
  matches->erase(std::remove_if(matches->begin(), matches->end(),
                                [&](const v1::ImportMatch& m) { return !access_->CheckJob(*p, m.job_id()).ok(); }),
                 matches->end());
  return st;
}

grpc::Status AuthorizedQuery::DeleteJob(grpc::ServerContext* context, const v1::DeleteJobRequest* request,
                                        v1::DeleteJobResponse* response) {
  if (grpc::Status st = ForJob(*context, request->job_id(), Permission::kManage); !st.ok()) return st;
  return inner_->DeleteJob(context, request, response);
}

grpc::Status AuthorizedQuery::RenameJob(grpc::ServerContext* context, const v1::RenameJobRequest* request,
                                        v1::RenameJobResponse* response) {
  if (absl::Status st = CheckRequestString(request->new_job_id(), "new_job_id"); !st.ok()) return ToGrpc(st);
  if (grpc::Status st = ForJob(*context, request->job_id(), Permission::kManage); !st.ok()) return st;
  return inner_->RenameJob(context, request, response);
}

grpc::Status AuthorizedQuery::SetStepPattern(grpc::ServerContext* context, const v1::SetStepPatternRequest* request,
                                             v1::SetStepPatternResponse* response) {
  if (absl::Status st = CheckRequestString(request->step_pattern(), "step_pattern"); !st.ok()) return ToGrpc(st);
  // Changes what every later report of the job says: the owner's or an admin's, as a rename.
  if (grpc::Status st = ForJob(*context, request->job_id(), Permission::kManage); !st.ok()) return st;
  return inner_->SetStepPattern(context, request, response);
}

grpc::Status AuthorizedControl::Attach(grpc::ServerContext* context, const v1::AttachRequest* request,
                                       v1::AttachResponse* response) {
  for (const auto& [value, field] : {std::pair{&request->job_id(), "job_id"},
                                     std::pair{&request->host(), "host"},
                                     std::pair{&request->capture().step_pattern(), "step_pattern"}}) {
    if (absl::Status st = CheckRequestString(*value, field); !st.ok()) return ToGrpc(st);
  }
  if (request->capture().kinds_size() > kMaxAttachKinds) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "too many kinds in the attach request");
  }
  for (const std::string& kind : request->capture().kinds()) {
    if (absl::Status st = CheckRequestString(kind, "kinds"); !st.ok()) return ToGrpc(st);
  }
  absl::StatusOr<Principal> p = access_->Authorize(*context, Permission::kControl);
  if (!p.ok()) return ToGrpc(p.status());
  if (absl::Status st = access_->CheckJob(*p, request->job_id()); !st.ok()) return ToGrpc(st);
  return inner_->Attach(context, request, response);
}

grpc::Status AuthorizedControl::Detach(grpc::ServerContext* context, const v1::DetachRequest* request,
                                       v1::DetachResponse* response) {
  if (absl::Status st = CheckRequestString(request->job_id(), "job_id"); !st.ok()) return ToGrpc(st);
  absl::StatusOr<Principal> p = access_->Authorize(*context, Permission::kControl);
  if (!p.ok()) return ToGrpc(p.status());
  if (absl::Status st = access_->CheckJob(*p, request->job_id()); !st.ok()) return ToGrpc(st);
  return inner_->Detach(context, request, response);
}

grpc::Status AuthorizedControl::GetCapture(grpc::ServerContext* context,
                                           const v1::GetCaptureRequest* request,
                                           v1::GetCaptureResponse* response) {
  // Reading a capture's progress is a query; starting or stopping one is control.
  if (absl::Status st = CheckRequestString(request->job_id(), "job_id"); !st.ok()) return ToGrpc(st);
  absl::StatusOr<Principal> p = access_->Authorize(*context, Permission::kQuery);
  if (!p.ok()) return ToGrpc(p.status());
  if (absl::Status st = access_->CheckJob(*p, request->job_id()); !st.ok()) return ToGrpc(st);
  grpc::Status st = inner_->GetCapture(context, request, response);
  // A capture id may belong to another job than the one named.
  if (st.ok() && response->capture().job_id() != request->job_id()) {
    if (absl::Status own = access_->CheckJob(*p, response->capture().job_id()); !own.ok()) {
      response->Clear();
      return ToGrpc(own);
    }
  }
  return st;
}

}  // namespace gpuspy::collector
