#include "collector/rpc/bad_request_interceptor.h"

#include <string>

namespace gpuspy::collector {
namespace {

using grpc::experimental::InterceptionHookPoints;
using grpc::experimental::InterceptorBatchMethods;

class BadRequestInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit BadRequestInterceptor(const char* method) : method_(method != nullptr ? method : "?") {}

  void Intercept(InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE)) {
      // A unary request that failed to deserialize reaches interceptors as no message at all.
      if (methods->GetRecvMessage() == nullptr) unparseable_ = true;
    }
    if (unparseable_ && methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      // Only the status gRPC made of the parse failure: a refusal for resources (whose handler
      // also yields no message) keeps its own code.
      if (methods->GetSendStatus().error_code() == grpc::StatusCode::INTERNAL) {
        methods->ModifySendStatus(grpc::Status(
            grpc::StatusCode::INVALID_ARGUMENT,
            "the request to " + method_ + " does not parse as its protobuf message (bad or truncated bytes)"));
      }
    }
    methods->Proceed();
  }

 private:
  const std::string method_;
  bool unparseable_ = false;
};

}  // namespace

grpc::experimental::Interceptor* BadRequestInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  // Streams read their own messages (Ingest parses each itself and says which one failed).
  if (info->type() != grpc::experimental::ServerRpcInfo::Type::UNARY) return nullptr;
  return new BadRequestInterceptor(info->method());
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> MakeBadRequestInterceptorFactory() {
  return std::make_unique<BadRequestInterceptorFactory>();
}

}  // namespace gpuspy::collector
