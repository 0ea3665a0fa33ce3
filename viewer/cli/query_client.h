// The CLI's connection to gpuspyd's Query and Control services, with errors turned into one
// clear line.
#pragma once

#include <memory>
#include <string>

#include "gpuspy/v1/services.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace gpuspy::cli {

class QueryClient {
 public:
  QueryClient(const std::string& address, double timeout_s);

  // Calls `method` on the stub with a deadline; on failure prints "gpuspy: ..." to stderr and
  // returns false.
  template <typename Request, typename Response, typename Method>
  bool Call(Method method, const Request& request, Response* response) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    grpc::Status st = (stub_.get()->*method)(&ctx, request, response);
    if (st.ok()) return true;
    PrintError(st);
    return false;
  }

  // The same for the Control service (attach/detach).
  template <typename Request, typename Response, typename Method>
  bool Control(Method method, const Request& request, Response* response) {
    return Status(ControlStatus(method, request, response));
  }
  // Calls a Control method and returns its status without printing (callers that react to
  // particular codes, e.g. a capture the collector no longer knows).
  template <typename Request, typename Response, typename Method>
  grpc::Status ControlStatus(Method method, const Request& request, Response* response) {
    grpc::ClientContext ctx;
    ctx.set_deadline(Deadline());
    return (control_.get()->*method)(&ctx, request, response);
  }
  // Prints a failed status as Call does; true when `status` is OK.
  bool Status(const grpc::Status& status) const {
    if (status.ok()) return true;
    PrintError(status);
    return false;
  }

  v1::Query::Stub* stub() { return stub_.get(); }
  const std::string& address() const { return address_; }

 private:
  std::chrono::system_clock::time_point Deadline() const;
  void PrintError(const grpc::Status& status) const;

  std::string address_;
  double timeout_s_;
  std::unique_ptr<v1::Query::Stub> stub_;
  std::unique_ptr<v1::Control::Stub> control_;
};

}  // namespace gpuspy::cli
