#include "collector/control/capture_manager.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "analysis/text_form.h"
#include "spdlog/spdlog.h"

namespace gpuspy::collector {
namespace {

// Old captures are kept for `gpuspy attach` to read their outcome; beyond this, the oldest go.
constexpr size_t kMaxCapturesKept = 1000;

std::string Describe(const v1::AttachRequest& r) {
  std::string s = absl::StrCat("job '", r.job_id(), "'");
  if (r.rank() >= 0) absl::StrAppend(&s, " rank ", r.rank());
  if (!r.host().empty()) absl::StrAppend(&s, " on host ", r.host());
  if (!r.process_keys().empty()) absl::StrAppend(&s, " (", r.process_keys_size(), " named processes)");
  return s;
}

}  // namespace

CaptureManager::CaptureManager(ConnectionRegistry* connections, std::string step_pattern,
                               std::function<size_t(const std::string&)> known_processes)
    : connections_(connections),
      step_pattern_(std::move(step_pattern)),
      known_processes_(std::move(known_processes)),
      // Ids stay unique across collector restarts (a process may report an older capture).
      next_capture_id_(static_cast<uint64_t>(absl::ToUnixMillis(absl::Now()))) {}

bool CaptureManager::Matches(const v1::AttachRequest& r, const v1::ProcessIdentity& id) {
  if (id.job_id() != r.job_id()) return false;
  if (r.rank() >= 0 && id.rank() != r.rank()) return false;
  if (!r.host().empty() && id.host() != r.host()) return false;
  if (!r.process_keys().empty() &&
      std::find(r.process_keys().begin(), r.process_keys().end(), id.process_key()) ==
          r.process_keys().end()) {
    return false;
  }
  return true;
}

bool CaptureManager::Terminal(v1::CaptureState s) {
  return s == v1::CAPTURE_STATE_DONE || s == v1::CAPTURE_STATE_STOPPED ||
         s == v1::CAPTURE_STATE_FAILED || s == v1::CAPTURE_STATE_EXITED;
}

v1::CaptureProcess* CaptureManager::FindLocked(v1::Capture& capture, uint64_t process_id) {
  for (v1::CaptureProcess& p : *capture.mutable_processes()) {
    if (p.process_id() == process_id) return &p;
  }
  return nullptr;
}

void CaptureManager::ArmLocked(v1::Capture& capture, const v1::AttachRequest& request,
                               const LiveProcess& live) {
  v1::CaptureProcess* p = FindLocked(capture, live.process_id);
  if (p == nullptr) p = capture.add_processes();
  p->set_process_id(live.process_id);
  p->set_host(live.identity.host());
  p->set_rank(live.identity.rank());
  p->set_pid(live.identity.pid());
  p->set_steps_wanted(request.capture().steps());
  p->mutable_status()->set_capture_id(capture.capture_id());
  v1::ServerMessage m;
  m.mutable_command()->set_command_id(capture.capture_id());
  *m.mutable_command()->mutable_start_capture() = capture.request();
  // Written under mu_ on purpose: a status arriving right after must find the process listed.
  if (!connections_->Push(live.process_id, m)) {
    p->mutable_status()->set_state(v1::CAPTURE_STATE_EXITED);
    p->mutable_status()->set_message("the process disconnected before it could be armed");
  }
}

absl::StatusOr<v1::AttachResponse> CaptureManager::Attach(const v1::AttachRequest& request) {
  if (request.job_id().empty()) return absl::InvalidArgumentError("attach needs a job id");
  const v1::StartCapture& want = request.capture();
  if (want.steps() == 0 && want.duration_ns() <= 0) {
    return absl::InvalidArgumentError("attach needs --steps N or --duration D (or both)");
  }
  std::vector<LiveProcess> live = connections_->Live(request.job_id());
  if (live.empty()) {
    const size_t known = known_processes_(request.job_id());
    if (known == 0) {
      return absl::NotFoundError(absl::StrCat("no job '", request.job_id(),
                                              "': no process of it ever connected to this collector"));
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "job '", request.job_id(), "' has no live process (", known,
        " seen, all disconnected): it has finished or lost its collector"));
  }
  std::vector<LiveProcess> dormant;
  size_t continuous = 0;
  for (const LiveProcess& p : live) {
    if (!Matches(request, p.identity)) continue;
    if (p.mode == v1::CAPTURE_MODE_DORMANT) {
      dormant.push_back(p);
    } else {
      ++continuous;
    }
  }
  if (dormant.empty() && continuous == 0) {
    return absl::NotFoundError(absl::StrCat("no live process of ", Describe(request), " (",
                                            live.size(), " live in the job)"));
  }
  if (dormant.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the ", analysis::CountOf(continuous, "matching process", "matching processes"), " of ",
        Describe(request),
        " trace continuously (GPUSPY_MODE=always): their steps are stored already; "
        "use gpuspy report"));
  }

  std::lock_guard lock(mu_);
  if (auto it = latest_by_job_.find(request.job_id()); it != latest_by_job_.end()) {
    const v1::Capture& running = captures_.at(it->second);
    if (running.active()) {
      return absl::AlreadyExistsError(absl::StrCat(
          "capture ", running.capture_id(), " is already running on job '", request.job_id(),
          "'; wait for it, or stop it with: gpuspy detach --job ", request.job_id()));
    }
  }
  const uint64_t id = ++next_capture_id_;
  v1::Capture& capture = captures_[id];
  capture.set_capture_id(id);
  capture.set_job_id(request.job_id());
  *capture.mutable_request() = want;
  capture.mutable_request()->set_capture_id(id);
  if (capture.request().step_pattern().empty()) {
    capture.mutable_request()->set_step_pattern(pattern_of_ ? pattern_of_(request.job_id()) : step_pattern_);
  }
  capture.set_started_unix_ns(absl::ToUnixNanos(absl::Now()));
  capture.set_active(true);
  requests_[id] = request;
  latest_by_job_[request.job_id()] = id;
  for (const LiveProcess& p : dormant) ArmLocked(capture, request, p);

  v1::AttachResponse response;
  response.set_capture_id(id);
  for (const v1::CaptureProcess& p : capture.processes()) {
    response.set_processes_armed(response.processes_armed() +
                                 (p.status().state() != v1::CAPTURE_STATE_EXITED));
  }
  if (continuous > 0) {
    response.add_notes(absl::StrCat(analysis::CountOf(continuous, "process", "processes"),
                                    continuous == 1 ? " traces continuously and was not armed"
                                                    : " trace continuously and were not armed"));
  }
  FinishIfOverLocked(capture);
  while (captures_.size() > kMaxCapturesKept) {
    auto oldest = captures_.begin();
    if (oldest->second.active()) break;
    requests_.erase(oldest->first);
    captures_.erase(oldest);
  }
  spdlog::info("capture {}: {} armed ({} processes, {} steps, {} ms)", id, Describe(request),
               response.processes_armed(), want.steps(), want.duration_ns() / 1'000'000);
  return response;
}

absl::StatusOr<v1::DetachResponse> CaptureManager::Detach(const v1::DetachRequest& request) {
  std::lock_guard lock(mu_);
  auto it = latest_by_job_.find(request.job_id());
  if (it == latest_by_job_.end() || !captures_.at(it->second).active()) {
    return absl::NotFoundError(absl::StrCat("no capture is running on job '", request.job_id(), "'"));
  }
  v1::Capture& capture = captures_.at(it->second);
  v1::DetachResponse response;
  response.set_capture_id(capture.capture_id());
  v1::ServerMessage m;
  m.mutable_command()->set_command_id(capture.capture_id());
  m.mutable_command()->mutable_stop_capture()->set_capture_id(capture.capture_id());
  for (const v1::CaptureProcess& p : capture.processes()) {
    if (Terminal(p.status().state())) continue;
    if (connections_->Push(p.process_id(), m)) {
      response.set_processes_stopped(response.processes_stopped() + 1);
    }
  }
  spdlog::info("capture {}: detach asked, {} processes told to stop", capture.capture_id(),
               response.processes_stopped());
  return response;
}

absl::StatusOr<v1::Capture> CaptureManager::Get(const v1::GetCaptureRequest& request) const {
  std::lock_guard lock(mu_);
  uint64_t id = request.capture_id();
  if (id == 0) {
    auto it = latest_by_job_.find(request.job_id());
    if (it == latest_by_job_.end()) {
      return absl::NotFoundError(absl::StrCat("no capture on job '", request.job_id(),
                                              "' is known to this collector"));
    }
    id = it->second;
  }
  auto it = captures_.find(id);
  if (it == captures_.end()) {
    return absl::NotFoundError(absl::StrCat("capture ", id, " is not known to this collector"));
  }
  return it->second;
}

void CaptureManager::FinishIfOverLocked(v1::Capture& capture) {
  if (!capture.active()) return;
  for (const v1::CaptureProcess& p : capture.processes()) {
    if (!Terminal(p.status().state())) return;
  }
  capture.set_active(false);
  capture.set_finished_unix_ns(absl::ToUnixNanos(absl::Now()));
  spdlog::info("capture {} on job '{}' finished", capture.capture_id(), capture.job_id());
}

void CaptureManager::OnProcessConnected(const LiveProcess& process) {
  if (process.mode != v1::CAPTURE_MODE_DORMANT) return;
  std::lock_guard lock(mu_);
  auto it = latest_by_job_.find(process.identity.job_id());
  if (it == latest_by_job_.end()) return;
  v1::Capture& capture = captures_.at(it->second);
  if (!capture.active()) return;
  const v1::AttachRequest& request = requests_.at(capture.capture_id());
  if (!Matches(request, process.identity)) return;
  // A rank that (re)started during the capture joins it; one that already finished its window
  // and reconnected is not armed again.
  if (const v1::CaptureProcess* p = FindLocked(capture, process.process_id);
      p != nullptr && Terminal(p->status().state()) &&
      p->status().state() != v1::CAPTURE_STATE_EXITED) {
    return;
  }
  ArmLocked(capture, request, process);
}

void CaptureManager::OnCaptureStatus(const LiveProcess& process) {
  const v1::CaptureStatus& status = process.capture;
  std::lock_guard lock(mu_);
  auto it = captures_.find(status.capture_id());
  if (it == captures_.end()) return;  // from before a collector restart
  v1::CaptureProcess* p = FindLocked(it->second, process.process_id);
  if (p == nullptr) return;
  *p->mutable_status() = status;
  FinishIfOverLocked(it->second);
}

void CaptureManager::OnProcessClosed(uint64_t process_id) {
  std::lock_guard lock(mu_);
  for (auto& [id, capture] : captures_) {
    if (!capture.active()) continue;
    v1::CaptureProcess* p = FindLocked(capture, process_id);
    if (p == nullptr || Terminal(p->status().state())) continue;
    p->mutable_status()->set_state(v1::CAPTURE_STATE_EXITED);
    p->mutable_status()->set_message(
        absl::StrCat("the process disconnected after ", p->status().steps_captured(), " of ",
                     p->steps_wanted(), " steps"));
    FinishIfOverLocked(capture);
  }
}

}  // namespace gpuspy::collector
