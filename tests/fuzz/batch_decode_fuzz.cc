// libFuzzer target: ingest's decoding of untrusted batches (protobuf parse, dictionary, columns).
#include <cstddef>
#include <cstdint>

#include "codec/batch_decoder.h"
#include "tests/fuzz/quiet_protobuf.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  gpuspy::fuzz::QuietProtobuf();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gpuspy::v1::EventBatch batch;
  if (!batch.ParseFromArray(data, static_cast<int>(size))) return 0;
  gpuspy::ProcessDictionary dict;
  if (!dict.Apply(batch.dictionary()).ok()) return 0;
  gpuspy::EventColumns out;
  (void)gpuspy::DecodeBatch(batch, dict, &out);
  return 0;
}
