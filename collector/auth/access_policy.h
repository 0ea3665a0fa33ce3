// Who may do what (docs/security.md). Pure: the facts about a call in, a principal or a refusal
// out; the gRPC and HTTP front ends gather the facts (grpc_access.h, http_gate.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "collector/auth/access_tokens.h"

namespace gpuspy::collector {

// kManage: delete and rename jobs. It goes with control (the control token, or a uid for its own
// jobs): the ingest/query token is handed to every producer and must not be able to erase data.
enum class Permission { kIngest, kQuery, kControl, kManage };

// What a caller may do. `only_uid` set: only with the jobs whose processes all belong to that uid
// (and what it ingests is recorded as that uid's).
struct Principal {
  bool ingest = false;
  bool query = false;
  bool control = false;
  std::optional<uint32_t> only_uid;
  std::string who;  // for log lines: "uid 1000 (unix socket)", "token", ...

  bool May(Permission p) const {
    return p == Permission::kIngest ? ingest : p == Permission::kQuery ? query : control;  // kManage: control
  }
};

struct CallFacts {
  enum class Transport { kUnix, kTcp };
  Transport transport = Transport::kTcp;
  std::string bearer;                 // the token the call presented ("" = none)
  // The caller's uid, when the kernel vouches for it: on the unix socket from its checked peer
  // name (unix_peer_name.h); on loopback TCP from the socket table (loopback_uid.h).
  std::optional<uint32_t> peer_uid;
  // A unix-socket caller without a uid-bearing name: accepted only if it is gpuspyd's own uid or
  // root (checked when the connection was accepted).
  bool unix_owner_or_root = false;
  bool loopback = false;              // TCP peer on 127.0.0.0/8 or ::1
};

struct AccessConfig {
  const AccessTokens* tokens = nullptr;
  uint32_t owner_uid = 0;              // gpuspyd's effective uid
  bool insecure_allow_remote = false;  // TCP from beyond loopback without a token
};

// OK: the principal (which holds `needed`). UNAUTHENTICATED: no acceptable credentials (a wrong
// token, a missing one where tokens are required). PERMISSION_DENIED: known, but not allowed.
absl::StatusOr<Principal> Decide(const AccessConfig& config, const CallFacts& facts,
                                 Permission needed);

const char* PermissionName(Permission p);

}  // namespace gpuspy::collector
