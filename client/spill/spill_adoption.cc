#include "client/spill/spill_adoption.h"

#include <dirent.h>
#include <sys/stat.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/log/log_line.h"
#include "client/spill/private_directory.h"
#include "client/spill/spill_file.h"
#include "codec/batch_event_count.h"

namespace gpuspy::inject {
namespace {

constexpr char kSpillSuffix[] = ".spill";

std::vector<std::string> SpillFilesIn(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (const dirent* e = readdir(d)) {
    if (absl::EndsWith(e->d_name, kSpillSuffix)) out.push_back(absl::StrCat(dir, "/", e->d_name));
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// Delivers one claimed orphan; true when all of it is stored.
bool DeliverOrphan(OrphanSpill& orphan, const v1::ProcessIdentity& owner,
                   const AdoptionOptions& options, BatchSink& sink, AdoptionResult* result) {
  if (orphan.empty()) return true;  // nothing to tell the collector
  absl::StatusOr<uint64_t> stored = sink.Connect(owner, options.connect_timeout);
  if (!stored.ok()) {
    result->last_problem = absl::StrCat("collector not taking it now: ", stored.status().message());
    Log(LogLevel::kInfo, "orphaned spill %s: %s", orphan.path().c_str(),
        result->last_problem.c_str());
    return false;
  }
  bool failed = false;
  absl::StatusOr<SpillReplayResult> replayed = orphan.Replay([&](const std::string& bytes) {
    if (options.should_stop()) {
      failed = true;
      return false;
    }
    v1::EventBatch batch;
    if (!batch.ParseFromString(bytes)) return true;  // checksummed; cannot happen
    if (batch.sequence() <= *stored) {
      // Delivered before its owner ended (the replayed head of its spill). The names it defined
      // are in the collector's dictionary for the process already.
      ++result->batches_already_stored;
      return true;
    }
    absl::Status st = sink.Deliver(batch, options.ack_timeout);
    if (!st.ok() && !absl::IsInvalidArgument(st)) {
      result->last_problem = absl::StrCat("delivery stopped: ", st.message());
      Log(LogLevel::kInfo, "orphaned spill %s: %s; left for later", orphan.path().c_str(),
          result->last_problem.c_str());
      failed = true;
      return false;
    }
    if (st.ok()) {
      ++result->batches_delivered;
      result->events_delivered += CountEvents(batch);
    }
    return true;
  });
  sink.Disconnect();
  return replayed.ok() && !failed && replayed->kept == 0;
}

}  // namespace

std::string SpillPathFor(const std::string& dir, const v1::ProcessIdentity& identity) {
  std::string name = identity.process_key().empty()
                         ? absl::StrCat(identity.host(), "-", identity.pid())
                         : identity.process_key();
  for (char& c : name) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!plain) c = c == ':' ? '-' : '_';
  }
  return absl::StrCat(dir, "/", name, kSpillSuffix);
}

AdoptionResult AdoptOrphanSpills(const AdoptionOptions& options,
                                 const std::function<std::unique_ptr<BatchSink>()>& make_sink) {
  AdoptionResult result;
  struct stat st;
  if (stat(options.dir.c_str(), &st) != 0) return result;  // nothing was ever spilled here
  // Only from a directory that is provably ours: in one another user controls, a file that looks
  // like our spill could be theirs to plant (or a link to one of ours they want removed).
  if (absl::Status mine = EnsurePrivateDirectory(options.dir); !mine.ok()) {
    result.last_problem = std::string(mine.message());
    Log(LogLevel::kWarn, "not adopting spill files: %s", result.last_problem.c_str());
    return result;
  }
  // Unreadable for good: moved out of the way (kept for a look), so that no later pass of any
  // process trips over it again.
  auto set_aside = [&](const std::string& path, std::string why) {
    ++result.files_left;
    result.last_problem = std::move(why);
    const std::string aside = path + ".unreadable";
    Log(LogLevel::kWarn, "cannot adopt %s; renamed to %s", result.last_problem.c_str(),
        rename(path.c_str(), aside.c_str()) == 0 ? aside.c_str() : path.c_str());
  };
  for (const std::string& path : SpillFilesIn(options.dir)) {
    if (path == options.own_path || options.should_stop()) continue;
    absl::StatusOr<std::unique_ptr<OrphanSpill>> orphan = OrphanSpill::Claim(path);
    if (!orphan.ok()) {
      // Held by a live owner or another adopter, or gone: none of our business.
      if (absl::IsDataLoss(orphan.status())) set_aside(path, std::string(orphan.status().message()));
      continue;
    }
    v1::ProcessIdentity owner;
    if (!owner.ParseFromString((*orphan)->header()) || owner.process_key().empty()) {
      set_aside(path, absl::StrCat(path, ": its header names no process"));
      continue;
    }
    std::unique_ptr<BatchSink> sink = make_sink();
    const uint64_t before = result.events_delivered;
    if (DeliverOrphan(**orphan, owner, options, *sink, &result)) {
      (*orphan)->Remove();
      ++result.files_delivered;
      Log(LogLevel::kInfo, "delivered %llu events that process %s (job %s) left in %s",
          static_cast<unsigned long long>(result.events_delivered - before),
          owner.process_key().c_str(), owner.job_id().c_str(), path.c_str());
    } else {
      ++result.files_left;
    }
  }
  return result;
}

}  // namespace gpuspy::inject

namespace gpuspy::inject {

struct BackgroundAdoption::Shared {
  mutable std::mutex mu;
  std::condition_variable cv;
  bool running = false;
  AdoptionResult totals;
  std::atomic<bool> stop{false};
};

BackgroundAdoption::BackgroundAdoption(AdoptionOptions options,
                                       std::function<std::unique_ptr<BatchSink>()> make_sink)
    : options_(std::move(options)),
      make_sink_(std::move(make_sink)),
      shared_(std::make_shared<Shared>()) {}

BackgroundAdoption::~BackgroundAdoption() { Stop(std::chrono::milliseconds(0)); }

void BackgroundAdoption::Start() {
  {
    std::lock_guard lock(shared_->mu);
    if (shared_->running || shared_->stop.load()) return;
    shared_->running = true;
  }
  if (thread_.joinable()) thread_.join();  // the previous pass, finished
  AdoptionOptions options = options_;
  std::shared_ptr<Shared> shared = shared_;
  options.should_stop = [shared] { return shared->stop.load(); };
  thread_ = std::thread([shared, options = std::move(options), make_sink = make_sink_] {
    // Signals belong to the application's threads.
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    pthread_setname_np(pthread_self(), "gpuspy-adopt");
    const AdoptionResult r = AdoptOrphanSpills(options, make_sink);
    {
      std::lock_guard lock(shared->mu);
      shared->totals.files_delivered += r.files_delivered;
      shared->totals.files_left = r.files_left;
      shared->totals.batches_delivered += r.batches_delivered;
      shared->totals.batches_already_stored += r.batches_already_stored;
      shared->totals.events_delivered += r.events_delivered;
      shared->totals.last_problem = r.last_problem;
      shared->running = false;
    }
    shared->cv.notify_all();
  });
}

void BackgroundAdoption::Stop(std::chrono::milliseconds timeout) {
  shared_->stop.store(true);
  if (!thread_.joinable()) return;
  std::unique_lock lock(shared_->mu);
  if (shared_->cv.wait_for(lock, timeout, [this] { return !shared_->running; })) {
    lock.unlock();
    thread_.join();
  } else {
    // Blocked on a collector that does not answer: it ends on its own (ack timeout) and touches
    // only the shared state.
    lock.unlock();
    thread_.detach();
  }
}

AdoptionResult BackgroundAdoption::totals() const {
  std::lock_guard lock(shared_->mu);
  return shared_->totals;
}

}  // namespace gpuspy::inject

namespace gpuspy::inject {

std::vector<SpillInventoryEntry> ListSpills(const std::string& dir) {
  std::vector<SpillInventoryEntry> out;
  for (const std::string& path : SpillFilesIn(dir)) {
    SpillInventoryEntry e;
    e.path = path;
    struct stat st;
    if (stat(path.c_str(), &st) == 0) e.bytes = static_cast<uint64_t>(st.st_size);
    absl::StatusOr<std::unique_ptr<OrphanSpill>> spill = OrphanSpill::Inspect(path, &e.held);
    if (!spill.ok()) {
      if (absl::IsNotFound(spill.status())) continue;  // delivered meanwhile
      e.problem = std::string(spill.status().message());
      out.push_back(std::move(e));
      continue;
    }
    if (!e.owner.ParseFromString((*spill)->header()) || e.owner.process_key().empty()) {
      e.problem = "its header names no process";
    }
    absl::StatusOr<SpillReplayResult> walked = (*spill)->Replay([&](const std::string& bytes) {
      v1::EventBatch batch;
      if (batch.ParseFromString(bytes)) e.events += CountEvents(batch);
      return true;
    });
    if (walked.ok()) {
      e.batches = walked->delivered;
      if (walked->torn && e.problem.empty()) e.problem = "ends in a damaged record";
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace gpuspy::inject
