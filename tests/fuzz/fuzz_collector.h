// The collector's ingest and query path in-process, for fuzz targets: an embedded store in a
// private temporary directory, the real BatchIngestor and QueryEngine. No gRPC, no HTTP server.
#pragma once

#include <memory>
#include <string>

#include "collector/ingest/batch_ingestor.h"
#include "collector/live/connection_registry.h"
#include "collector/query/query_engine.h"
#include "collector/storage/data_versions.h"

namespace gpuspy::fuzz {

class FuzzCollector {
 public:
  FuzzCollector();   // aborts if the store cannot be opened: nothing could be fuzzed
  ~FuzzCollector();  // removes the directory

  collector::BatchIngestor& ingestor() { return *ingestor_; }
  collector::QueryEngine& engine() { return *engine_; }
  collector::Store& store() { return *store_; }

 private:
  std::string dir_;
  std::unique_ptr<collector::Store> store_;
  std::unique_ptr<collector::DictionaryCache> dictionaries_;
  collector::IngestCounters counters_;
  collector::ConnectionRegistry connections_;
  collector::DataVersions versions_;
  std::unique_ptr<collector::BatchIngestor> ingestor_;
  std::unique_ptr<collector::QueryEngine> engine_;
};

}  // namespace gpuspy::fuzz
