// Unparseable unary requests answer INVALID_ARGUMENT with a reason. gRPC's generated synchronous
// handlers parse the request before any of our code runs and, when it does not parse, answer
// INTERNAL with protobuf's (for proto3, empty) initialization error: to a client that reads as a
// daemon fault, not as its own bad bytes. One server interceptor covers every unary method of
// every service without touching the services: it notes a request that did not deserialize
// (gRPC hands interceptors no message then) and rewrites the INTERNAL status that follows.
#pragma once

#include <memory>

#include "grpcpp/support/server_interceptor.h"

namespace gpuspy::collector {

class BadRequestInterceptorFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(grpc::experimental::ServerRpcInfo* info) override;
};

// For ServerBuilder::experimental().SetInterceptorCreators.
std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> MakeBadRequestInterceptorFactory();

}  // namespace gpuspy::collector
