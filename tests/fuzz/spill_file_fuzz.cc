// libFuzzer target: reading a spill file another process left behind (gpuspy spill, adoption).
// The spill directory is private, so the bytes are damage rather than an attack: a torn write, a
// full disk, a file from another version. Each input is written as the only .spill file of a
// directory, listed (ListSpills) and delivered (AdoptOrphanSpills) to a sink that takes
// everything: neither may crash, hang or read past what is there.
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "client/log/log_line.h"
#include "client/spill/spill_adoption.h"
#include "client/spill/spill_file.h"
#include "tests/fuzz/quiet_protobuf.h"

namespace {

class TakeAll final : public gpuspy::inject::BatchSink {
 public:
  absl::StatusOr<uint64_t> Connect(const gpuspy::v1::ProcessIdentity&, absl::Duration) override {
    return 0;
  }
  absl::Status Deliver(const gpuspy::v1::EventBatch& batch, absl::Duration) override {
    return batch.sequence() % 7 == 3 ? absl::InvalidArgumentError("refused") : absl::OkStatus();
  }
  void Disconnect() override {}
  bool Connected() const override { return true; }
  absl::Status Send(const gpuspy::v1::ClientMessage&) override { return absl::OkStatus(); }
  std::vector<gpuspy::v1::Command> TakeCommands() override { return {}; }
};

std::string* g_dir = nullptr;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  gpuspy::fuzz::QuietProtobuf();
  gpuspy::inject::SetLogLevel(gpuspy::inject::LogLevel::kOff);
  char tmpl[] = "/tmp/gpuspy-spill-fuzz.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) std::abort();
  g_dir = new std::string(tmpl);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = *g_dir + "/input.spill";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  (void)gpuspy::inject::ListSpills(*g_dir);
  gpuspy::inject::AdoptionOptions options;
  options.dir = *g_dir;
  (void)gpuspy::inject::AdoptOrphanSpills(options,
                                          [] { return std::make_unique<TakeAll>(); });
  // Whatever adoption did with it (delivered and removed, or moved aside as unreadable).
  unlink(path.c_str());
  unlink((path + ".unreadable").c_str());
  return 0;
}
