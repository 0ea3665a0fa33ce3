#include "collector/query/query_service.h"

#include "collector/rpc/grpc_status.h"

namespace gpuspy::collector {

grpc::Status QueryService::ListJobs(grpc::ServerContext*, const v1::ListJobsRequest*,
                                    v1::ListJobsResponse* response) {
  return Reply(engine_->ListJobs(), response);
}

grpc::Status QueryService::ListSteps(grpc::ServerContext*, const v1::ListStepsRequest* request,
                                     v1::ListStepsResponse* response) {
  return Reply(engine_->ListSteps(*request), response);
}

grpc::Status QueryService::GetStepReport(grpc::ServerContext*,
                                         const v1::GetStepReportRequest* request,
                                         v1::GetStepReportResponse* response) {
  return Reply(engine_->GetStepReport(*request), response);
}

grpc::Status QueryService::GetJobSummary(grpc::ServerContext*,
                                         const v1::GetJobSummaryRequest* request,
                                         v1::GetJobSummaryResponse* response) {
  return Reply(engine_->GetJobSummary(*request), response);
}

grpc::Status QueryService::GetEvents(grpc::ServerContext*, const v1::GetEventsRequest* request,
                                     v1::GetEventsResponse* response) {
  return Reply(engine_->GetEvents(*request), response);
}

grpc::Status QueryService::GetStats(grpc::ServerContext*, const v1::GetStatsRequest*,
                                    v1::GetStatsResponse* response) {
  *response = engine_->GetStats();
  return grpc::Status::OK;
}

grpc::Status QueryService::GetRunProfile(grpc::ServerContext*,
                                         const v1::GetRunProfileRequest* request,
                                         v1::GetRunProfileResponse* response) {
  return Reply(engine_->GetRunProfile(*request), response);
}

grpc::Status QueryService::DiffRuns(grpc::ServerContext*, const v1::DiffRunsRequest* request,
                                    v1::DiffRunsResponse* response) {
  return Reply(engine_->DiffRuns(*request), response);
}

grpc::Status QueryService::GetStepTimeline(grpc::ServerContext*,
                                           const v1::GetStepTimelineRequest* request,
                                           v1::GetStepTimelineResponse* response) {
  return Reply(engine_->GetStepTimeline(*request), response);
}

grpc::Status QueryService::FindImports(grpc::ServerContext*, const v1::FindImportsRequest* request,
                                       v1::FindImportsResponse* response) {
  return Reply(engine_->admin()->FindImports(*request), response);
}

grpc::Status QueryService::DeleteJob(grpc::ServerContext*, const v1::DeleteJobRequest* request,
                                     v1::DeleteJobResponse* response) {
  return Reply(engine_->admin()->DeleteJob(*request), response);
}

grpc::Status QueryService::RenameJob(grpc::ServerContext*, const v1::RenameJobRequest* request,
                                     v1::RenameJobResponse* response) {
  return Reply(engine_->admin()->RenameJob(*request), response);
}

grpc::Status QueryService::SetStepPattern(grpc::ServerContext*, const v1::SetStepPatternRequest* request,
                                          v1::SetStepPatternResponse* response) {
  return Reply(engine_->SetStepPattern(*request), response);
}

}  // namespace gpuspy::collector
