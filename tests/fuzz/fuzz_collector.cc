#include "tests/fuzz/fuzz_collector.h"

#include <stdlib.h>

#include <cstdio>
#include <filesystem>

namespace gpuspy::fuzz {

FuzzCollector::FuzzCollector() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/gpuspy-fuzz-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    std::perror("gpuspy fuzz: mkdtemp");
    std::abort();
  }
  dir_ = pattern;
  collector::EmbeddedStoreOptions o;
  o.data_dir = dir_ + "/store";
  // Small segments: sealing and rolling are part of what gets exercised.
  o.segment_max_bytes = 1 << 20;
  absl::StatusOr<std::unique_ptr<collector::Store>> store = collector::OpenEmbeddedStore(o);
  if (!store.ok()) {
    std::fprintf(stderr, "gpuspy fuzz: cannot open a store in %s: %s\n", dir_.c_str(),
                 store.status().ToString().c_str());
    std::abort();
  }
  store_ = std::move(*store);
  dictionaries_ = std::make_unique<collector::DictionaryCache>(store_.get());
  ingestor_ = std::make_unique<collector::BatchIngestor>(store_.get(), dictionaries_.get(), &counters_,
                                                         analysis::StepSegmenter(), &versions_);
  engine_ = std::make_unique<collector::QueryEngine>(store_.get(), dictionaries_.get(), &counters_,
                                                     &connections_, &versions_);
}

FuzzCollector::~FuzzCollector() {
  engine_.reset();
  ingestor_.reset();
  dictionaries_.reset();
  store_.reset();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

}  // namespace gpuspy::fuzz
