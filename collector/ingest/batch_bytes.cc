#include "collector/ingest/batch_bytes.h"

#include <climits>
#include <cstdint>

#include "gpuspy/v1/services.pb.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"

namespace gpuspy::collector {

bool TakeBatchBytes(std::string* client_message) {
  using google::protobuf::internal::WireFormatLite;
  if (client_message->size() > static_cast<size_t>(INT_MAX)) return false;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(client_message->data()),
                                            static_cast<int>(client_message->size()));
  size_t offset = 0;
  size_t length = 0;
  int occurrences = 0;
  while (const uint32_t tag = in.ReadTag()) {
    if (WireFormatLite::GetTagFieldNumber(tag) == v1::ClientMessage::kBatchFieldNumber &&
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      uint32_t size = 0;
      if (!in.ReadVarint32(&size)) return false;
      offset = static_cast<size_t>(in.CurrentPosition());
      length = size;
      if (!in.Skip(static_cast<int>(size))) return false;
      ++occurrences;
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return false;
    }
  }
  if (!in.ConsumedEntireMessage() || occurrences != 1) return false;
  client_message->resize(offset + length);
  client_message->erase(0, offset);
  return true;
}

}  // namespace gpuspy::collector
