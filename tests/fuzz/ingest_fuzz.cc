// libFuzzer target: the collector's ingest path and everything that later reads what it stored.
// Input: gpuspy.v1.ClientMessage records, each preceded by its varint length (protobuf's
// delimited format; tests/fuzz/write_seeds.cc writes real streams that way). Hellos register
// processes, batches go through BatchIngestor into an embedded store, then the job is queried
// (steps, reports, summary, events, timeline, trace export) — what the viewer does next. Whatever
// parses as protobuf, however wrong (bad dictionary refs, absurd timestamps, huge counts,
// sequences out of order), must get a status, never a crash, a hang or a sanitizer report.
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/delimited_message_util.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "collector/http/timeline_json.h"
#include "collector/http/trace_export.h"
#include "spdlog/spdlog.h"
#include "tests/fuzz/fuzz_collector.h"
#include "tests/fuzz/quiet_protobuf.h"

namespace {

using gpuspy::fuzz::FuzzCollector;
namespace v1 = gpuspy::v1;

// One store serves many inputs (opening one costs milliseconds); every input gets processes and
// a job of its own (names prefixed with the run number) so inputs do not see each other's data.
// The store is replaced now and then so it does not grow without bound.
constexpr uint64_t kInputsPerStore = 100;
constexpr int kMaxMessages = 64;

// Statuses a caller can get for bad input; anything else (Internal, Unknown, ...) from a healthy
// store means the collector mishandled what it accepted.
void CheckExpected(const absl::Status& st) {
  switch (st.code()) {
    case absl::StatusCode::kOk:
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kFailedPrecondition:
      return;
    default:
      std::fprintf(stderr, "unexpected status: %s\n", st.ToString().c_str());
      __builtin_trap();
  }
}

void QueryJob(FuzzCollector& c, const std::string& job) {
  gpuspy::collector::QueryEngine& engine = c.engine();
  v1::ListStepsRequest steps_req;
  steps_req.set_job_id(job);
  absl::StatusOr<v1::ListStepsResponse> steps = engine.ListSteps(steps_req);
  CheckExpected(steps.status());
  v1::GetStepReportRequest report;
  report.set_job_id(job);
  report.set_all(true);
  CheckExpected(engine.GetStepReport(report).status());
  report.set_all(false);
  report.set_last(2);
  CheckExpected(engine.GetStepReport(report).status());
  v1::GetJobSummaryRequest summary;
  summary.set_job_id(job);
  CheckExpected(engine.GetJobSummary(summary).status());
  // Small limits and one step of trace: the JSON writers cost far more per event than ingest,
  // and would otherwise set the pace of the whole target.
  v1::GetEventsRequest events;
  events.set_job_id(job);
  events.set_limit(2000);
  CheckExpected(engine.GetEvents(events).status());
  gpuspy::collector::TraceQuery trace;
  if (steps.ok() && steps->steps_size() > 0) {
    const v1::Step& first = steps->steps(0);
    v1::GetStepTimelineRequest timeline;
    timeline.set_job_id(job);
    timeline.set_process_id(first.process_id());
    timeline.set_step(first.number());
    absl::StatusOr<v1::GetStepTimelineResponse> laid_out = engine.GetStepTimeline(timeline);
    CheckExpected(laid_out.status());
    if (laid_out.ok()) (void)gpuspy::collector::TimelineJson(laid_out->timeline());
    trace.has_steps = true;
    trace.first_step = trace.last_step = first.number();
    trace.steps_text = std::to_string(first.number());
  } else {
    trace.first_step = std::numeric_limits<int64_t>::min();
    trace.last_step = std::numeric_limits<int64_t>::max();
  }
  CheckExpected(gpuspy::collector::ExportTraceJson(&engine, job, trace).status());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Rejected batches are logged; at thousands of inputs a second that is only noise.
  spdlog::set_level(spdlog::level::off);
  gpuspy::fuzz::QuietProtobuf();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static uint64_t run = 0;
  static std::unique_ptr<FuzzCollector> collector;
  if (run++ % kInputsPerStore == 0) {
    collector.reset();
    collector = std::make_unique<FuzzCollector>();
  }
  const std::string prefix = absl::StrCat("r", run, "/");

  google::protobuf::io::ArrayInputStream in(data, static_cast<int>(size));
  uint64_t process_id = 0;
  std::string job;
  auto hello = [&](v1::ProcessIdentity identity) {
    identity.set_process_key(prefix + identity.process_key());
    if (!identity.job_id().empty()) identity.set_job_id(prefix + identity.job_id());
    identity.set_host(prefix + identity.host());
    absl::StatusOr<v1::Welcome> welcome = collector->ingestor().Hello(identity, 1'700'000'000'000'000'000);
    CheckExpected(welcome.status());
    if (!welcome.ok()) return;
    process_id = welcome->process_id();
    job = identity.job_id().empty() ? absl::StrCat("host-", identity.host()) : identity.job_id();
  };
  for (int i = 0; i < kMaxMessages; ++i) {
    v1::ClientMessage m;
    bool clean_eof = false;
    if (!google::protobuf::util::ParseDelimitedFromZeroCopyStream(&m, &in, &clean_eof)) break;
    if (m.has_hello()) {
      hello(m.hello().identity());
    } else if (m.has_batch()) {
      if (process_id == 0) {
        v1::ProcessIdentity anonymous;
        anonymous.set_process_key("anonymous");
        anonymous.set_job_id("fuzz");
        hello(anonymous);
      }
      if (process_id != 0) CheckExpected(collector->ingestor().Ingest(process_id, m.batch()).status());
    }
  }
  if (!job.empty()) QueryJob(*collector, job);
  return 0;
}
