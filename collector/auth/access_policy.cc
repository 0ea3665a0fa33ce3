#include "collector/auth/access_policy.h"

#include "absl/strings/str_cat.h"

namespace gpuspy::collector {
namespace {

Principal Everything(std::string who) {
  return Principal{.ingest = true, .query = true, .control = true, .only_uid = std::nullopt,
                   .who = std::move(who)};
}

// A uid the kernel vouched for: gpuspyd's own uid and root see everything, any other uid its own
// jobs only (and may ingest, query and attach to those).
Principal ForUid(const AccessConfig& config, uint32_t uid, const char* via) {
  if (uid == 0 || uid == config.owner_uid) return Everything(absl::StrCat("uid ", uid, " (", via, ")"));
  Principal p = Everything(absl::StrCat("uid ", uid, " (", via, ")"));
  p.only_uid = uid;
  return p;
}

absl::StatusOr<Principal> Check(Principal p, Permission needed) {
  if (p.May(needed)) return p;
  if (needed == Permission::kControl || needed == Permission::kManage) {
    return absl::PermissionDeniedError(absl::StrCat(p.who, " may not ", PermissionName(needed),
                                                    ": that needs the control token (gpuspyd --control-token-file)"));
  }
  return absl::PermissionDeniedError(absl::StrCat(p.who, " may not ", PermissionName(needed)));
}

}  // namespace

const char* PermissionName(Permission p) {
  switch (p) {
    case Permission::kIngest: return "send events";
    case Permission::kQuery: return "query";
    case Permission::kControl: return "attach or detach";
    case Permission::kManage: return "delete or rename jobs";
  }
  return "?";
}

absl::StatusOr<Principal> Decide(const AccessConfig& config, const CallFacts& facts,
                                 Permission needed) {
  const bool tokens = config.tokens != nullptr && config.tokens->configured();
  if (!facts.bearer.empty()) {
    // A token that is presented must be right, on every transport: a wrong one is never ignored.
    const TokenRole role = tokens ? config.tokens->Match(facts.bearer) : TokenRole::kNone;
    if (role == TokenRole::kNone) {
      return absl::UnauthenticatedError(tokens ? "wrong token"
                                               : "this gpuspyd has no tokens configured, yet the call carried one");
    }
    Principal p{.ingest = role == TokenRole::kIngest, .query = true,
                .control = role == TokenRole::kControl, .only_uid = std::nullopt,
                .who = role == TokenRole::kControl ? "the control token" : "the ingest/query token"};
    // On the unix socket the caller is also known by uid: a token must not take away what the
    // uid alone allows (the owner's CLI with the ingest token in its environment may still attach).
    if (!p.May(needed) && facts.transport == CallFacts::Transport::kUnix) {
      if (facts.peer_uid.has_value()) return Check(ForUid(config, *facts.peer_uid, "unix socket"), needed);
      if (facts.unix_owner_or_root) return Check(Everything("gpuspyd's user (unix socket)"), needed);
    }
    return Check(std::move(p), needed);
  }
  if (facts.transport == CallFacts::Transport::kUnix) {
    if (facts.peer_uid.has_value()) return Check(ForUid(config, *facts.peer_uid, "unix socket"), needed);
    if (facts.unix_owner_or_root) return Check(Everything("gpuspyd's user (unix socket)"), needed);
    return absl::UnauthenticatedError("unknown unix-socket peer");
  }
  if (tokens) {
    return absl::UnauthenticatedError(
        "this gpuspyd requires a token over TCP: set GPUSPY_TOKEN or GPUSPY_TOKEN_FILE (gpuspy "
        "--token-file), or use its unix socket");
  }
  if (!facts.loopback) {
    if (config.insecure_allow_remote) return Check(Everything("remote peer (--insecure-allow-remote)"), needed);
    return absl::UnauthenticatedError("remote callers need a token");
  }
  if (!facts.peer_uid.has_value()) {
    return absl::UnauthenticatedError("cannot tell which local user is calling (socket table lookup failed)");
  }
  return Check(ForUid(config, *facts.peer_uid, "loopback"), needed);
}

}  // namespace gpuspy::collector
