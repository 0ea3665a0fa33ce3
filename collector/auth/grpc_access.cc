#include "collector/auth/grpc_access.h"

#include <sys/socket.h>

#include "absl/strings/str_cat.h"
#include "client/transport/socket_hook.h"
#include "client/transport/unix_peer_name.h"
#include "collector/auth/loopback_uid.h"
#include "collector/ingest/batch_ingestor.h"
#include "collector/rpc/grpc_status.h"
#include "spdlog/spdlog.h"

namespace gpuspy::collector {
namespace {

// Logs the first few events of a kind, then one in every 1000.
bool ShouldLog(std::atomic<uint64_t>& count) {
  const uint64_t n = count.fetch_add(1, std::memory_order_relaxed);
  return n < 20 || n % 1000 == 0;
}

std::atomic<uint64_t> g_unix_refusals{0};

void CheckUnixPeer(int fd, uid_t owner) {
  int domain = 0;
  socklen_t len = sizeof(domain);
  if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || domain != AF_UNIX) return;
  ucred cred{};
  len = sizeof(cred);
  std::string why;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    why = "no peer credentials";
  } else {
    const std::string name = UnixPeerAddressName(fd);
    if (std::optional<uint32_t> claimed = UidFromUnixPeerName(name); claimed.has_value()) {
      if (*claimed == cred.uid) return;
      why = absl::StrCat("pid ", cred.pid, " uid ", cred.uid, " named its socket for uid ", *claimed);
    } else {
      if (cred.uid == 0 || cred.uid == owner) return;
      why = absl::StrCat("pid ", cred.pid, " uid ", cred.uid,
                         " connected without gpuspy's peer name (only gpuspyd's own uid and root may)");
    }
  }
  // Closing here would make gRPC close its listener too; a shut-down socket is just a peer that
  // hung up.
  shutdown(fd, SHUT_RDWR);
  if (ShouldLog(g_unix_refusals)) spdlog::warn("unix socket: refused a connection: {}", why);
}

}  // namespace

std::unique_ptr<grpc::ServerBuilderOption> UnixPeerCheckOption(uid_t owner_uid) {
  return SocketHookOption([owner_uid](int fd, SocketUse use) {
    if (use == SocketUse::kServerConnection) CheckUnixPeer(fd, owner_uid);
  });
}

absl::Status CheckRequestString(const std::string& value, const char* field) {
  if (value.size() <= kMaxIdentityStringBytes) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, " is ", value.size(), " bytes (limit ", kMaxIdentityStringBytes, ")"));
}

CallFacts GrpcAccess::Facts(const grpc::ServerContext& context) const {
  CallFacts facts;
  const auto& metadata = context.client_metadata();
  if (auto it = metadata.find("authorization"); it != metadata.end()) {
    const std::string header(it->second.data(), it->second.size());
    facts.bearer = std::string(BearerToken(header));
    // A malformed header is a wrong token, not an absent one.
    if (facts.bearer.empty()) facts.bearer = "\x01malformed";
  }
  const std::string peer = context.peer();
  if (peer.starts_with("unix:") || peer.starts_with("unix-abstract:")) {
    facts.transport = CallFacts::Transport::kUnix;
    facts.peer_uid = UidFromGrpcPeer(peer);
    // Any other unix peer got past UnixPeerCheckOption only as gpuspyd's uid or root.
    facts.unix_owner_or_root = !facts.peer_uid.has_value();
    return facts;
  }
  facts.transport = CallFacts::Transport::kTcp;
  std::string ip;
  int port = 0;
  if (!ParseGrpcTcpPeer(peer, &ip, &port)) return facts;
  facts.loopback = IsLoopbackIp(ip);
  // The uid matters only where no token is required (and is not free: a netlink round trip).
  if (!facts.loopback || (config_.tokens != nullptr && config_.tokens->configured())) return facts;
  // The server end the client connected to: the listen address, else the client's own address
  // (loopback connections usually run 127.0.0.1 -> 127.0.0.1), else the canonical one.
  for (const std::string& local : {tcp_listen_host_, ip, std::string(ip.find(':') == std::string::npos ? "127.0.0.1" : "::1")}) {
    if (!IsLoopbackIp(local)) continue;
    absl::StatusOr<uint32_t> uid = LoopbackPeerUid(ip, port, local, *tcp_port_);
    if (uid.ok()) {
      facts.peer_uid = *uid;
      break;
    }
  }
  return facts;
}

void GrpcAccess::LogRefusal(const grpc::ServerContext& context, const absl::Status& st) const {
  if (ShouldLog(refusals_)) spdlog::warn("refused a call from {}: {}", context.peer(), st.ToString());
}

absl::StatusOr<Principal> GrpcAccess::Authorize(const grpc::ServerContext& context,
                                               Permission needed) const {
  absl::StatusOr<Principal> p = Decide(config_, Facts(context), needed);
  if (!p.ok()) LogRefusal(context, p.status());
  return p;
}

absl::Status GrpcAccess::CheckJob(const Principal& principal, const std::string& job_id) const {
  if (!principal.only_uid.has_value()) return absl::OkStatus();
  absl::StatusOr<std::vector<ProcessRecord>> processes = store_->ListProcesses(job_id);
  if (!processes.ok()) return processes.status();
  for (const ProcessRecord& p : *processes) {
    if (p.identity.uid() != *principal.only_uid) {
      return absl::PermissionDeniedError(
          absl::StrCat("job '", job_id, "' belongs to another user (", principal.who,
                       " sees only its own jobs)"));
    }
  }
  return absl::OkStatus();
}

grpc::Status GrpcAccess::AdmitStream(grpc::ServerContext* context) {
  return ToGrpc(Authorize(*context, Permission::kIngest).status());
}

grpc::Status GrpcAccess::AdmitProcess(grpc::ServerContext* context, v1::ProcessIdentity* identity) {
  absl::StatusOr<Principal> p = Authorize(*context, Permission::kIngest);
  if (!p.ok()) return ToGrpc(p.status());
  if (!p->only_uid.has_value()) return grpc::Status::OK;
  // A uid-bound producer is recorded as its uid, whatever it says, and its process keys live in
  // a namespace of their own: it cannot resume, and so take over, another user's process.
  const uint32_t uid = *p->only_uid;
  identity->set_uid(uid);
  if (!identity->process_key().empty()) {  // an empty key is refused by the ingestor as it is
    identity->set_process_key(absl::StrCat("uid", uid, "/", identity->process_key()));
  }
  // Producers without a job are grouped per host, and per user: a shared node's users must not
  // end up in one job.
  if (identity->job_id().empty()) identity->set_job_id(absl::StrCat("host-", identity->host(), "-uid", uid));
  if (absl::Status st = CheckJob(*p, identity->job_id()); !st.ok()) {
    LogRefusal(*context, st);
    return ToGrpc(st);
  }
  return grpc::Status::OK;
}

}  // namespace gpuspy::collector
