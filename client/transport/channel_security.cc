#include "client/transport/channel_security.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "client/transport/socket_hook.h"
#include "client/transport/unix_peer_name.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/client_interceptor.h"

namespace gpuspy {
namespace {

const char* Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

absl::StatusOr<std::string> ReadWhole(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::FailedPreconditionError(absl::StrCat("cannot read ", what, " ", path));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Adds the bearer token to every call's initial metadata. Works on plaintext channels too, where
// gRPC's own call credentials refuse to send anything.
class BearerInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit BearerInterceptor(std::shared_ptr<const std::string> header) : header_(std::move(header)) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->insert({"authorization", *header_});
    }
    methods->Proceed();
  }

 private:
  std::shared_ptr<const std::string> header_;
};

class BearerFactory final : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit BearerFactory(const std::string& token)
      : header_(std::make_shared<const std::string>("Bearer " + token)) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(grpc::experimental::ClientRpcInfo*) override {
    return new BearerInterceptor(header_);
  }

 private:
  std::shared_ptr<const std::string> header_;
};

}  // namespace

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadWhole(path, "token file");
  if (!text.ok()) return text.status();
  std::string token(absl::StripAsciiWhitespace(text->substr(0, text->find('\n'))));
  if (token.empty()) return absl::FailedPreconditionError(absl::StrCat("token file ", path, " is empty"));
  return token;
}

absl::StatusOr<ClientSecurity> ClientSecurityFromEnvironment() {
  ClientSecurity s;
  if (const char* token = Env("GPUSPY_TOKEN"); token != nullptr) {
    s.token = std::string(absl::StripAsciiWhitespace(token));
  } else if (const char* file = Env("GPUSPY_TOKEN_FILE"); file != nullptr) {
    absl::StatusOr<std::string> token = ReadTokenFile(file);
    if (!token.ok()) return absl::Status(token.status().code(), absl::StrCat("GPUSPY_TOKEN_FILE: ", token.status().message()));
    s.token = *std::move(token);
  }
  const struct {
    const char* env;
    std::string* out;
  } files[] = {{"GPUSPY_TLS_CA", &s.tls_ca_pem},
               {"GPUSPY_TLS_CERT", &s.tls_cert_pem},
               {"GPUSPY_TLS_KEY", &s.tls_key_pem}};
  for (const auto& f : files) {
    if (const char* path = Env(f.env); path != nullptr) {
      absl::StatusOr<std::string> pem = ReadWhole(path, f.env);
      if (!pem.ok()) return pem.status();
      *f.out = *std::move(pem);
    }
  }
  if (s.tls_cert_pem.empty() != s.tls_key_pem.empty()) {
    return absl::InvalidArgumentError("GPUSPY_TLS_CERT and GPUSPY_TLS_KEY go together");
  }
  if (const char* name = Env("GPUSPY_TLS_SERVER_NAME"); name != nullptr) s.tls_server_name = name;
  return s;
}

std::shared_ptr<grpc::Channel> CreateClientChannel(const std::string& address,
                                                   const ClientSecurity& security,
                                                   grpc::ChannelArguments args) {
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (address.starts_with("unix:") || address.starts_with("unix-abstract:")) {
    SetSocketHook(&args, [](int fd, SocketUse use) {
      if (use == SocketUse::kClientConnection) BindUnixPeerName(fd);
    });
  } else if (!security.tls_ca_pem.empty()) {
    grpc::SslCredentialsOptions tls;
    tls.pem_root_certs = security.tls_ca_pem;
    tls.pem_cert_chain = security.tls_cert_pem;
    tls.pem_private_key = security.tls_key_pem;
    credentials = grpc::SslCredentials(tls);
    if (!security.tls_server_name.empty()) args.SetSslTargetNameOverride(security.tls_server_name);
  }
  if (security.token.empty()) return grpc::CreateCustomChannel(address, credentials, args);
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<BearerFactory>(security.token));
  return grpc::experimental::CreateCustomChannelWithInterceptors(address, credentials, args,
                                                                 std::move(interceptors));
}

}  // namespace gpuspy
