// On-demand capture windows (attach/detach): which processes of a job are asked to capture,
// what each one reports back, and when a capture is over.
//
// The collector does not time the window itself: it pushes StartCapture to every matching live
// process, and each process opens and closes its window at its own step boundaries (it alone
// sees them exactly). Processes that connect while a capture of their job runs join it, so
// restarted or late ranks are covered. A capture ends when every process is done, stopped,
// failed or gone.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "collector/live/connection_registry.h"
#include "gpuspy/v1/services.pb.h"

namespace gpuspy::collector {

class CaptureManager final : public ProcessObserver {
 public:
  // `known_processes(job)` says how many processes the store has ever seen for a job: it tells
  // "unknown job" from "job whose processes have all ended".
  CaptureManager(ConnectionRegistry* connections, std::string step_pattern,
                 std::function<size_t(const std::string&)> known_processes);

  // The step pattern a job's window opens at, when the job has its own (`gpuspy jobs
  // set-step-pattern`); without it, the constructor's. Set before serving.
  void set_job_step_pattern(std::function<std::string(const std::string& job)> pattern_of) {
    pattern_of_ = std::move(pattern_of);
  }

  absl::StatusOr<v1::AttachResponse> Attach(const v1::AttachRequest& request);
  absl::StatusOr<v1::DetachResponse> Detach(const v1::DetachRequest& request);
  absl::StatusOr<v1::Capture> Get(const v1::GetCaptureRequest& request) const;

  void OnProcessConnected(const LiveProcess& process) override;
  void OnCaptureStatus(const LiveProcess& process) override;
  void OnProcessClosed(uint64_t process_id) override;

 private:
  static bool Matches(const v1::AttachRequest& request, const v1::ProcessIdentity& identity);
  static bool Terminal(v1::CaptureState state);
  // Adds the process to the capture and pushes it StartCapture. Call with mu_ held.
  void ArmLocked(v1::Capture& capture, const v1::AttachRequest& request, const LiveProcess& p);
  void FinishIfOverLocked(v1::Capture& capture);
  v1::CaptureProcess* FindLocked(v1::Capture& capture, uint64_t process_id);

  ConnectionRegistry* connections_;
  const std::string step_pattern_;
  std::function<std::string(const std::string&)> pattern_of_;
  std::function<size_t(const std::string&)> known_processes_;

  mutable std::mutex mu_;
  uint64_t next_capture_id_;
  std::map<uint64_t, v1::Capture> captures_;           // by id
  std::map<uint64_t, v1::AttachRequest> requests_;     // by capture id: who may join
  std::map<std::string, uint64_t> latest_by_job_;
};

}  // namespace gpuspy::collector
