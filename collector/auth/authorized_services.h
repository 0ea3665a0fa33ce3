// The Query and Control services behind access control: each method authorizes the caller
// (grpc_access.h), checks the request's sizes and, for callers bound to one uid, that the job is
// theirs; then it calls the real service. ListJobs shows such callers their own jobs only.
#pragma once

#include "collector/auth/grpc_access.h"
#include "gpuspy/v1/services.grpc.pb.h"

namespace gpuspy::collector {

class AuthorizedQuery final : public v1::Query::Service {
 public:
  AuthorizedQuery(v1::Query::Service* inner, const GrpcAccess* access) : inner_(inner), access_(access) {}

  grpc::Status ListJobs(grpc::ServerContext* context, const v1::ListJobsRequest* request,
                        v1::ListJobsResponse* response) override;
  grpc::Status ListSteps(grpc::ServerContext* context, const v1::ListStepsRequest* request,
                         v1::ListStepsResponse* response) override;
  grpc::Status GetStepReport(grpc::ServerContext* context, const v1::GetStepReportRequest* request,
                             v1::GetStepReportResponse* response) override;
  grpc::Status GetJobSummary(grpc::ServerContext* context, const v1::GetJobSummaryRequest* request,
                             v1::GetJobSummaryResponse* response) override;
  grpc::Status GetEvents(grpc::ServerContext* context, const v1::GetEventsRequest* request,
                         v1::GetEventsResponse* response) override;
  grpc::Status GetStats(grpc::ServerContext* context, const v1::GetStatsRequest* request,
                        v1::GetStatsResponse* response) override;
  grpc::Status GetRunProfile(grpc::ServerContext* context, const v1::GetRunProfileRequest* request,
                             v1::GetRunProfileResponse* response) override;
  // Both jobs must be the caller's to see.
  grpc::Status DiffRuns(grpc::ServerContext* context, const v1::DiffRunsRequest* request,
                        v1::DiffRunsResponse* response) override;
  grpc::Status GetStepTimeline(grpc::ServerContext* context, const v1::GetStepTimelineRequest* request,
                               v1::GetStepTimelineResponse* response) override;
  // Matches in jobs the caller may not see are left out, as ListJobs leaves those jobs out.
  grpc::Status FindImports(grpc::ServerContext* context, const v1::FindImportsRequest* request,
                           v1::FindImportsResponse* response) override;
  // The job's owner (a uid for its own jobs) or an admin (gpuspyd's uid, root, the control
  // token): Permission::kManage, then the job check.
  grpc::Status DeleteJob(grpc::ServerContext* context, const v1::DeleteJobRequest* request,
                         v1::DeleteJobResponse* response) override;
  grpc::Status RenameJob(grpc::ServerContext* context, const v1::RenameJobRequest* request,
                         v1::RenameJobResponse* response) override;
  grpc::Status SetStepPattern(grpc::ServerContext* context, const v1::SetStepPatternRequest* request,
                              v1::SetStepPatternResponse* response) override;

 private:
  // Authorizes a call about `job_id` that needs `needed`.
  grpc::Status ForJob(const grpc::ServerContext& context, const std::string& job_id,
                      Permission needed = Permission::kQuery) const;

  v1::Query::Service* inner_;
  const GrpcAccess* access_;
};

class AuthorizedControl final : public v1::Control::Service {
 public:
  AuthorizedControl(v1::Control::Service* inner, const GrpcAccess* access) : inner_(inner), access_(access) {}

  grpc::Status Attach(grpc::ServerContext* context, const v1::AttachRequest* request,
                      v1::AttachResponse* response) override;
  grpc::Status Detach(grpc::ServerContext* context, const v1::DetachRequest* request,
                      v1::DetachResponse* response) override;
  grpc::Status GetCapture(grpc::ServerContext* context, const v1::GetCaptureRequest* request,
                          v1::GetCaptureResponse* response) override;

 private:
  v1::Control::Service* inner_;
  const GrpcAccess* access_;
};

}  // namespace gpuspy::collector
