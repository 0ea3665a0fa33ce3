// gRPC glue for gpuspy.v1.Query: every method delegates to QueryEngine and maps the status.
#pragma once

#include "collector/query/query_engine.h"
#include "gpuspy/v1/services.grpc.pb.h"

namespace gpuspy::collector {

class QueryService final : public v1::Query::Service {
 public:
  explicit QueryService(QueryEngine* engine) : engine_(engine) {}

  grpc::Status ListJobs(grpc::ServerContext*, const v1::ListJobsRequest*,
                        v1::ListJobsResponse* response) override;
  grpc::Status ListSteps(grpc::ServerContext*, const v1::ListStepsRequest* request,
                         v1::ListStepsResponse* response) override;
  grpc::Status GetStepReport(grpc::ServerContext*, const v1::GetStepReportRequest* request,
                             v1::GetStepReportResponse* response) override;
  grpc::Status GetJobSummary(grpc::ServerContext*, const v1::GetJobSummaryRequest* request,
                             v1::GetJobSummaryResponse* response) override;
  grpc::Status GetEvents(grpc::ServerContext*, const v1::GetEventsRequest* request,
                         v1::GetEventsResponse* response) override;
  grpc::Status GetStats(grpc::ServerContext*, const v1::GetStatsRequest*,
                        v1::GetStatsResponse* response) override;
  grpc::Status GetRunProfile(grpc::ServerContext*, const v1::GetRunProfileRequest* request,
                             v1::GetRunProfileResponse* response) override;
  grpc::Status DiffRuns(grpc::ServerContext*, const v1::DiffRunsRequest* request,
                        v1::DiffRunsResponse* response) override;
  grpc::Status GetStepTimeline(grpc::ServerContext*, const v1::GetStepTimelineRequest* request,
                               v1::GetStepTimelineResponse* response) override;
  grpc::Status FindImports(grpc::ServerContext*, const v1::FindImportsRequest* request,
                           v1::FindImportsResponse* response) override;
  grpc::Status DeleteJob(grpc::ServerContext*, const v1::DeleteJobRequest* request,
                         v1::DeleteJobResponse* response) override;
  grpc::Status RenameJob(grpc::ServerContext*, const v1::RenameJobRequest* request,
                         v1::RenameJobResponse* response) override;
  grpc::Status SetStepPattern(grpc::ServerContext*, const v1::SetStepPatternRequest* request,
                              v1::SetStepPatternResponse* response) override;

 private:
  QueryEngine* engine_;
};

}  // namespace gpuspy::collector
