// What a QueryEngine reads from, over an embedded store in a test's temporary directory: for the
// unit tests of the query side (analysis, metrics) that need a real store but no server.
#pragma once

#include <memory>
#include <string>

#include "collector/live/connection_registry.h"
#include "collector/live/ingest_counters.h"
#include "collector/query/query_engine.h"
#include "collector/storage/dictionary_cache.h"
#include "collector/storage/store.h"

namespace gpuspy::testing {

struct QueryEngineParts {
  explicit QueryEngineParts(const std::string& dir) {
    collector::EmbeddedStoreOptions o;
    o.data_dir = dir + "/store";
    store = *collector::OpenEmbeddedStore(o);
    dictionaries = std::make_unique<collector::DictionaryCache>(store.get());
  }
  // An engine over these parts (`versions`: see QueryEngine).
  std::unique_ptr<collector::QueryEngine> Engine(
      const collector::DataVersions* versions = nullptr) {
    return std::make_unique<collector::QueryEngine>(store.get(), dictionaries.get(), &counters,
                                                    &connections, versions);
  }

  std::unique_ptr<collector::Store> store;
  std::unique_ptr<collector::DictionaryCache> dictionaries;
  collector::IngestCounters counters;
  collector::ConnectionRegistry connections;
};

}  // namespace gpuspy::testing
