#include "viewer/cli/query_client.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "client/transport/channel_security.h"

namespace gpuspy::cli {

QueryClient::QueryClient(const std::string& address, double timeout_s)
    : address_(address), timeout_s_(timeout_s) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(512 << 20);  // raw event windows can be large
  // Token, TLS and unix-socket peer name from GPUSPY_TOKEN[_FILE] / GPUSPY_TLS_* (--token-file
  // and --tls-ca set those).
  absl::StatusOr<ClientSecurity> security = ClientSecurityFromEnvironment();
  if (!security.ok()) {
    std::fprintf(stderr, "gpuspy: %s\n", std::string(security.status().message()).c_str());
    std::exit(2);
  }
  auto channel = CreateClientChannel(address, *security, args);
  stub_ = v1::Query::NewStub(channel);
  control_ = v1::Control::NewStub(channel);
}

std::chrono::system_clock::time_point QueryClient::Deadline() const {
  return std::chrono::system_clock::now() +
         std::chrono::milliseconds(static_cast<int64_t>(timeout_s_ * 1000));
}

void QueryClient::PrintError(const grpc::Status& st) const {
  switch (st.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      // gRPC's words when the port speaks HTTP/1: gpuspyd's --http port (the web viewer's).
      if (st.error_message().find("http1.x server") != std::string::npos) {
        std::fprintf(stderr,
                     "gpuspy: %s is an HTTP port (gpuspyd's --http: the web viewer and /api), "
                     "not its gRPC port: give --collector gpuspyd's --listen address (default "
                     "127.0.0.1:7070)\n",
                     address_.c_str());
        break;
      }
      std::fprintf(stderr, "gpuspy: cannot reach gpuspyd at %s (%s)\n", address_.c_str(),
                   st.error_message().c_str());
      break;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      std::fprintf(stderr, "gpuspy: cannot reach gpuspyd at %s (no answer within %.0fs)\n",
                   address_.c_str(), timeout_s_);
      break;
    case grpc::StatusCode::UNAUTHENTICATED:
      std::fprintf(stderr, "gpuspy: gpuspyd at %s refused the call: %s\n", address_.c_str(),
                   st.error_message().c_str());
      break;
    case grpc::StatusCode::PERMISSION_DENIED:
    case grpc::StatusCode::NOT_FOUND:
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::ALREADY_EXISTS:
    case grpc::StatusCode::FAILED_PRECONDITION:
      std::fprintf(stderr, "gpuspy: %s\n", st.error_message().c_str());
      break;
    default:
      std::fprintf(stderr, "gpuspy: gpuspyd at %s answered error %d: %s\n", address_.c_str(),
                   static_cast<int>(st.error_code()), st.error_message().c_str());
  }
}

}  // namespace gpuspy::cli
