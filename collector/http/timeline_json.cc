#include "collector/http/timeline_json.h"

#include <nlohmann/json.hpp>
#include <vector>

namespace gpuspy::collector {
namespace {

template <typename T>
nlohmann::json Column(const google::protobuf::RepeatedField<T>& values) {
  return std::vector<T>(values.begin(), values.end());
}

nlohmann::json Lane(const v1::TimelineLane& lane) {
  if (lane.has_stream()) {
    return {{"kind", "stream"},
            {"device", lane.stream().device()},
            {"stream", lane.stream().stream()},
            {"label", lane.label()}};
  }
  return {{"kind", "thread"}, {"thread_id", lane.thread_id()}, {"label", lane.label()}};
}

}  // namespace

std::string TimelineJson(const v1::StepTimeline& t) {
  nlohmann::json j;
  j["strings"] = std::vector<std::string>(t.strings().begin(), t.strings().end());
  j["kinds"] = std::vector<std::string>(t.kinds().begin(), t.kinds().end());
  const v1::TimelineEvents& ev = t.events();
  j["events"] = {{"lane", Column(ev.lane())},         {"kind", Column(ev.kind())},
                 {"start", Column(ev.start_ns())},    {"end", Column(ev.end_ns())},
                 {"name", Column(ev.name())},         {"info", Column(ev.info())},
                 {"corr", Column(ev.correlation_id())}, {"depth", Column(ev.depth())}};
  nlohmann::json lanes = nlohmann::json::array();
  for (const v1::TimelineLane& lane : t.lanes()) lanes.push_back(Lane(lane));
  j["lanes"] = std::move(lanes);
  j["origin_ns"] = std::to_string(t.origin_ns());
  j["wall_ns"] = t.wall_ns();
  nlohmann::json idle = nlohmann::json::array();
  for (const v1::TimelineIdleSpan& s : t.idle()) idle.push_back({s.start_ns(), s.end_ns(), s.cause()});
  j["idle"] = std::move(idle);
  j["idle_causes"] = std::vector<std::string>(t.idle_causes().begin(), t.idle_causes().end());
  nlohmann::json blocking = nlohmann::json::array();
  for (const v1::TimelineBlockingSpan& s : t.blocking()) {
    blocking.push_back({s.start_ns(), s.end_ns(), s.lane()});
  }
  j["blocking"] = std::move(blocking);
  j["truncated"] = t.truncated();
  // Kernel names come from the application: never let one bad byte fail the whole answer.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace gpuspy::collector
