// Writes the binary seed corpora of the protobuf fuzz targets from synthetic training steps:
//   <dir>/ingest_fuzz/*.bin        Hello + EventBatch ClientMessages, varint-delimited
//   <dir>/batch_decode_fuzz/*.bin  one self-contained EventBatch (dictionary + events)
//   <dir>/spill_file_fuzz/*.spill  a spill file as a process leaves it (header + batches)
// The committed seeds under tests/fuzz/corpus/ came from `write_seeds tests/fuzz/corpus`; rerun it
// when the wire format changes. Each file stays below run.sh's -max_len (64 KiB).
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/delimited_message_util.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "client/spill/spill_file.h"
#include "codec/batch_encoder.h"
#include "gpuspy/v1/services.pb.h"
#include "tools/replay/synthetic_workload.h"

namespace {

namespace v1 = gpuspy::v1;
constexpr size_t kMaxSeedBytes = 24 << 10;  // small seeds keep the targets fast

void Append(const v1::ClientMessage& m, std::string* out) {
  google::protobuf::io::StringOutputStream stream(out);
  google::protobuf::util::SerializeDelimitedToZeroCopyStream(m, &stream);
}

std::string HelloOf(const gpuspy::synthetic::SyntheticRank& rank) {
  v1::ClientMessage m;
  *m.mutable_hello()->mutable_identity() = rank.identity;
  std::string out;
  Append(m, &out);
  return out;
}

// Whole steps as one batch each while the file stays under kMaxSeedBytes; `order` permutes them
// (sequence numbers follow the permutation: out-of-order arrival).
std::string Stream(const gpuspy::synthetic::SyntheticRank& rank, const std::vector<size_t>& order,
                   bool duplicate_last) {
  std::string out = HelloOf(rank);
  gpuspy::BatchEncoder encoder(&rank.strings);
  v1::ClientMessage last;
  for (size_t i : order) {
    if (i >= rank.steps.size()) continue;
    v1::ClientMessage m;
    encoder.Encode(rank.steps[i], i + 1, {}, m.mutable_batch());
    std::string next = out;
    Append(m, &next);
    if (next.size() > kMaxSeedBytes) break;
    out = std::move(next);
    last = m;
  }
  if (duplicate_last && last.has_batch()) Append(last, &out);
  return out;
}

void Write(const std::filesystem::path& path, const std::string& bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
  std::printf("%s: %zu bytes\n", path.c_str(), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_seeds <corpus dir>\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  for (gpuspy::synthetic::Scenario s : gpuspy::synthetic::AllScenarios()) {
    gpuspy::synthetic::SyntheticOptions o;
    o.scenario = s;
    o.steps = 2;
    o.warmup_steps = 1;
    o.job_id = "fuzz";
    const gpuspy::synthetic::SyntheticRank rank = gpuspy::synthetic::GenerateRank(o, 0);
    const std::string name = gpuspy::synthetic::ScenarioName(s);
    Write(dir / "ingest_fuzz" / (name + ".bin"), Stream(rank, {0, 1}, false));

    gpuspy::BatchEncoder encoder(&rank.strings);
    v1::EventBatch batch;
    encoder.Encode(rank.steps[1], 1, {}, &batch);
    std::string bytes = batch.SerializeAsString();
    if (bytes.size() <= kMaxSeedBytes) Write(dir / "batch_decode_fuzz" / (name + ".bin"), bytes);
  }
  // Arrival orders a real producer can cause: reordered after a reconnect, a batch resent.
  gpuspy::synthetic::SyntheticOptions o;
  o.scenario = gpuspy::synthetic::Scenario::kSyncStall;
  o.steps = 3;
  o.job_id = "fuzz";
  o.nvtx_steps = false;  // steps then come from period detection or fixed windows
  const gpuspy::synthetic::SyntheticRank rank = gpuspy::synthetic::GenerateRank(o, 0);
  Write(dir / "ingest_fuzz" / "no_nvtx_reordered_duplicate.bin", Stream(rank, {2, 0, 1}, true));

  // A spill file with its owner's identity and two batches, written by the real SpillFile.
  {
    const std::filesystem::path tmp = std::filesystem::temp_directory_path() / "gpuspy-seed-spill";
    std::filesystem::remove_all(tmp);
    std::filesystem::create_directories(tmp);
    std::filesystem::permissions(tmp, std::filesystem::perms::owner_all);
    const std::string path = (tmp / "seed.spill").string();
    {
      gpuspy::inject::SpillFile spill(path, 1 << 20, rank.identity.SerializeAsString());
      gpuspy::BatchEncoder encoder(&rank.strings);
      for (size_t i = 0; i < 2; ++i) {
        v1::EventBatch batch;
        encoder.Encode(rank.steps[i], i + 1, {}, &batch);
        if (!spill.Append(batch.SerializeAsString()).ok()) return 1;
      }
    }
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    Write(dir / "spill_file_fuzz" / "two_batches.spill", bytes);
    std::filesystem::remove_all(tmp);
  }
  return 0;
}
