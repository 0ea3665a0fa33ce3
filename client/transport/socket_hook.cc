#include "client/transport/socket_hook.h"

#include <grpc/support/sync.h>

#include <atomic>
#include <utility>

#include "grpcpp/version_info.h"

// gRPC's socket mutator is public only as an opaque channel argument: the struct and vtable live
// in gRPC's internal src/core/lib/iomgr/socket_mutator.h, and grpc_socket_mutator_init is
// exported (C++ linkage) from libgrpc. The layout below is the one of gRPC 1.51 (Debian 12) and
// is unchanged through the 1.6x releases; the e2e tests (security_e2e_test: peer credentials)
// fail if it ever stops being called. Re-check the header before widening this range.
static_assert(GRPC_CPP_VERSION_MAJOR == 1 && GRPC_CPP_VERSION_MINOR >= 51 &&
                  GRPC_CPP_VERSION_MINOR <= 69,
              "socket_hook.cc mirrors gRPC's internal grpc_socket_mutator layout: re-check it");

typedef enum {
  GRPC_FD_CLIENT_CONNECTION_USAGE,
  GRPC_FD_SERVER_LISTENER_USAGE,
  GRPC_FD_SERVER_CONNECTION_USAGE,
} grpc_fd_usage;

typedef struct {
  int fd;
  grpc_fd_usage usage;
} grpc_mutate_socket_info;

struct grpc_socket_mutator_vtable {
  bool (*mutate_fd)(int fd, grpc_socket_mutator* mutator);
  int (*compare)(grpc_socket_mutator* a, grpc_socket_mutator* b);
  void (*destroy)(grpc_socket_mutator* mutator);
  bool (*mutate_fd_2)(const grpc_mutate_socket_info* info, grpc_socket_mutator* mutator);
};

struct grpc_socket_mutator {
  const grpc_socket_mutator_vtable* vtable;
  gpr_refcount refcount;
};

void grpc_socket_mutator_init(grpc_socket_mutator* mutator, const grpc_socket_mutator_vtable* vtable);

namespace gpuspy {
namespace {

// Standard layout, `base` first: gRPC hands back &base.
struct HookMutator {
  grpc_socket_mutator base;
  gpuspy::SocketHook* hook;
  // gRPC orders everything done to a mutator (built on the caller's thread, used on its polling
  // threads, destroyed by whichever thread drops the last reference) through its own refcount,
  // inside libgrpc/libgpr, which are not built with ThreadSanitizer. The sanitizer would see the
  // hook built, called and deleted on different threads with nothing in between. Released after
  // building and after each use, acquired before each use and before deleting: this restates
  // gRPC's ordering where the sanitizer can see it, for two atomic operations per socket.
  std::atomic<uint64_t> handoffs{0};
};

HookMutator* Acquire(grpc_socket_mutator* m) {
  HookMutator* h = reinterpret_cast<HookMutator*>(m);
  (void)h->handoffs.load(std::memory_order_acquire);
  return h;
}

void Release(HookMutator* h) { h->handoffs.fetch_add(1, std::memory_order_release); }

// Only called by gRPC versions without mutate_fd_2, which the static_assert excludes.
bool MutateFd(int, grpc_socket_mutator*) { return true; }

int Compare(grpc_socket_mutator* a, grpc_socket_mutator* b) { return a < b ? -1 : (a > b ? 1 : 0); }

void Destroy(grpc_socket_mutator* m) {
  HookMutator* h = Acquire(m);
  delete h->hook;
  delete h;
}

bool MutateFd2(const grpc_mutate_socket_info* info, grpc_socket_mutator* m) {
  SocketUse use = SocketUse::kClientConnection;
  switch (info->usage) {
    case GRPC_FD_CLIENT_CONNECTION_USAGE: use = SocketUse::kClientConnection; break;
    case GRPC_FD_SERVER_LISTENER_USAGE: use = SocketUse::kServerListener; break;
    case GRPC_FD_SERVER_CONNECTION_USAGE: use = SocketUse::kServerConnection; break;
  }
  HookMutator* h = Acquire(m);
  (*h->hook)(info->fd, use);
  Release(h);
  return true;
}

const grpc_socket_mutator_vtable kVtable = {MutateFd, Compare, Destroy, MutateFd2};

grpc_socket_mutator* NewMutator(SocketHook hook) {
  auto* h = new HookMutator{};
  h->hook = new SocketHook(std::move(hook));
  grpc_socket_mutator_init(&h->base, &kVtable);
  Release(h);
  return &h->base;
}

class HookOption final : public grpc::ServerBuilderOption {
 public:
  explicit HookOption(SocketHook hook) : hook_(std::move(hook)) {}
  void UpdateArguments(grpc::ChannelArguments* args) override { SetSocketHook(args, hook_); }
  void UpdatePlugins(std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>*) override {}

 private:
  SocketHook hook_;
};

}  // namespace

void SetSocketHook(grpc::ChannelArguments* args, SocketHook hook) {
  // The arguments take over the mutator's one reference; gRPC calls Destroy when the last user
  // (channel, server, copies of the arguments) lets go.
  args->SetSocketMutator(NewMutator(std::move(hook)));
}

std::unique_ptr<grpc::ServerBuilderOption> SocketHookOption(SocketHook hook) {
  return std::make_unique<HookOption>(std::move(hook));
}

}  // namespace gpuspy
