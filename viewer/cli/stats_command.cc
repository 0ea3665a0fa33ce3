// `gpuspy stats`: the collector's counters, every field of CollectorStats.
#include "viewer/cli/commands.h"

#include <iostream>
#include <string>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include "viewer/cli/command_registry.h"
#include "viewer/cli/json_output.h"
#include "viewer/cli/query_client.h"
#include "viewer/cli/table.h"

namespace gpuspy::cli {
namespace {

// Every field of `m`, nested messages as "name.field" (only when present: a node's forwarding).
void AddStatsRows(const google::protobuf::Message& m, const std::string& prefix, Table& t) {
  const auto* d = m.GetDescriptor();
  const auto* r = m.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = d->field(i);
    const std::string name = prefix + f->name();
    switch (f->cpp_type()) {
      case google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE:
        if (r->HasField(m, f)) AddStatsRows(r->GetMessage(m, f), name + ".", t);
        break;
      case google::protobuf::FieldDescriptor::CPPTYPE_UINT64:
        t.Add({name, std::to_string(r->GetUInt64(m, f))});
        break;
      case google::protobuf::FieldDescriptor::CPPTYPE_STRING:
        t.Add({name, r->GetString(m, f)});
        break;
      default:
        break;  // CollectorStats holds counters, names and groups of them
    }
  }
}

}  // namespace

int Stats(const GlobalOptions& g) {
  QueryClient q(g.collector, g.timeout_s);
  v1::GetStatsResponse resp;
  if (!q.Call(&v1::Query::Stub::GetStats, v1::GetStatsRequest(), &resp)) return 1;
  if (g.json) {
    PrintJson(g, resp);
    return 0;
  }
  Table t({"COUNTER", ">VALUE"});
  AddStatsRows(resp.stats(), "", t);
  t.Print(std::cout);
  return 0;
}

RegisteredCommand RegisterStatsCommand(CLI::App& app, const GlobalOptions& g) {
  auto* stats = app.add_subcommand("stats", "The collector's own counters");
  return {stats, [&g] { return Stats(g); }};
}

}  // namespace gpuspy::cli
