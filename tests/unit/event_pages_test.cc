// GetEvents' pages over a real (embedded) store: read through the cursor, a job far larger than
// one page comes back whole, each event once, in order; a page is capped; a cursor that is not
// this query's is refused with one line.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "codec/batch_encoder.h"
#include "collector/ingest/batch_ingestor.h"
#include "collector/query/event_pages.h"
#include "collector/query/query_engine.h"
#include "tests/support/query_engine_parts.h"
#include "tests/support/subprocess.h"

namespace gpuspy::collector {
namespace {

constexpr int kProcesses = 2;
constexpr int kBatches = 40;
constexpr int kKernelsPerBatch = 1'500;
constexpr int64_t kKernelNs = 1'000;
// 120,000 events: more than a page's cap (100,000) in the job, 60,000 per process.
constexpr uint64_t kEventsPerProcess = uint64_t{kBatches} * kKernelsPerBatch;

// Kernel i of a process starts at i * kKernelNs and has correlation id i + 1, so the order a
// page gives back is visible in the ids, and each id says which event it is.
class EventPagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BatchIngestor ingestor(parts_.store.get(), parts_.dictionaries.get(), &parts_.counters,
                           analysis::StepSegmenter());
    for (int p = 0; p < kProcesses; ++p) {
      v1::ProcessIdentity id;
      id.set_process_key("test:big:" + std::to_string(p));
      id.set_job_id("big");
      id.set_rank(p);
      processes_.push_back(ingestor.Hello(id, 1)->process_id());
      StringTable strings;
      const StringRef name = strings.Intern("ampere_sgemm_128x64_tn");
      BatchEncoder encoder(&strings);
      for (int b = 0; b < kBatches; ++b) {
        EventColumns ev;
        // Each batch written in reverse: a batch's events come back by start time all the same.
        for (int k = kKernelsPerBatch - 1; k >= 0; --k) {
          const uint64_t i = static_cast<uint64_t>(b * kKernelsPerBatch + k);
          const int64_t t = static_cast<int64_t>(i) * kKernelNs;
          ev.kernels.push_back({t, t + kKernelNs / 2, i + 1, name, {0, 1, 7}, {}, 0});
        }
        v1::EventBatch batch;
        encoder.Encode(ev, static_cast<uint64_t>(b) + 1, {}, &batch);
        ASSERT_TRUE(ingestor.Ingest(processes_.back(), batch).ok());
      }
    }
  }

  // Every page of `request` from its first, by the engine; correlation ids by process.
  std::map<uint64_t, std::vector<uint64_t>> ReadAll(v1::GetEventsRequest request, int* pages,
                                                    uint64_t max_page_bytes = kMaxPageBytes) {
    std::map<uint64_t, std::vector<uint64_t>> ids;
    EventReader reader(parts_.store.get(), parts_.dictionaries.get());
    absl::StatusOr<std::vector<ProcessRecord>> records = parts_.store->ListProcesses("big");
    EXPECT_TRUE(records.ok());
    std::erase_if(*records, [&](const ProcessRecord& p) {
      return request.process_id() != 0 && p.process_id != request.process_id();
    });
    *pages = 0;
    for (;;) {
      absl::StatusOr<v1::GetEventsResponse> page =
          ReadEventPage(&reader, *records, request, max_page_bytes);
      EXPECT_TRUE(page.ok()) << page.status();
      if (!page.ok()) break;
      ++*pages;
      uint64_t n = 0;
      for (const v1::ProcessEvents& p : page->processes()) {
        for (const v1::Event& e : p.events()) {
          ids[p.process_id()].push_back(e.kernel().correlation_id());
          ++n;
        }
      }
      EXPECT_GT(n, 0u) << "page " << *pages << " is empty";
      EXPECT_EQ(page->truncated(), !page->next_cursor().empty());
      if (page->next_cursor().empty() || *pages > 10'000) break;
      request.set_cursor(page->next_cursor());
    }
    return ids;
  }

  testing::TempDir dir_;
  testing::QueryEngineParts parts_{dir_.path()};
  std::vector<uint64_t> processes_;
};

// Exactly 1..n in order.
void ExpectEveryIdOnceInOrder(const std::vector<uint64_t>& ids, uint64_t first, uint64_t n) {
  ASSERT_EQ(ids.size(), n);
  for (uint64_t i = 0; i < n; ++i) {
    ASSERT_EQ(ids[i], first + i) << "at " << i;
  }
}

TEST_F(EventPagesTest, ThroughTheCursorEveryEventComesBackOnceInOrder) {
  v1::GetEventsRequest request;
  request.set_job_id("big");
  request.set_limit(7'000);  // pages end inside batches of 1,500, and inside a process
  int pages = 0;
  const auto ids = ReadAll(request, &pages);
  ASSERT_EQ(ids.size(), 2u);
  for (uint64_t p : processes_) ExpectEveryIdOnceInOrder(ids.at(p), 1, kEventsPerProcess);
  EXPECT_EQ(pages, static_cast<int>((kProcesses * kEventsPerProcess + 6'999) / 7'000));
}

TEST_F(EventPagesTest, AByteBudgetEndsPagesEarlyAndLosesNothing) {
  v1::GetEventsRequest request;
  request.set_job_id("big");
  request.set_process_id(processes_[1]);
  int pages = 0;
  const auto ids = ReadAll(request, &pages, /*max_page_bytes=*/200'000);
  ASSERT_EQ(ids.size(), 1u);
  ExpectEveryIdOnceInOrder(ids.at(processes_[1]), 1, kEventsPerProcess);
  EXPECT_GT(pages, 10);  // a kernel message is ~50 bytes: ~4,000 a page, not 100,000
}

TEST_F(EventPagesTest, AWindowPagesOnlyItsEvents) {
  v1::GetEventsRequest request;
  request.set_job_id("big");
  request.set_process_id(processes_[0]);
  // Kernels 10,000 .. 29,999 start in it (kernel i spans [i, i + 0.5) us): ids 10,001..30,000.
  request.set_from_ns(10'000 * kKernelNs);
  request.set_to_ns(30'000 * kKernelNs);
  request.set_limit(3'000);
  int pages = 0;
  const auto ids = ReadAll(request, &pages);
  ASSERT_EQ(ids.size(), 1u);
  ExpectEveryIdOnceInOrder(ids.at(processes_[0]), 10'001, 20'000);
  EXPECT_EQ(pages, 7);

  // The first page's time base: the start of the earliest batch the window touches (kernels
  // 9,000..10,499), from the index; a trace export needs it before the events.
  request.clear_cursor();
  absl::StatusOr<v1::GetEventsResponse> first = parts_.Engine()->GetEvents(request);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->earliest_ns(), 9'000 * kKernelNs);
}

TEST_F(EventPagesTest, AHugeLimitIsClampedToThePageCap) {
  auto engine = parts_.Engine();
  v1::GetEventsRequest request;
  request.set_job_id("big");
  request.set_limit(5'000'000);
  absl::StatusOr<v1::GetEventsResponse> page = engine->GetEvents(request);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->limit_clamped_to(), kMaxEventsPerPage);
  // 100,000 or fewer (the page's byte cap may come first), and the rest behind the cursor.
  uint64_t n = 0;
  for (const auto& p : page->processes()) n += static_cast<uint64_t>(p.events_size());
  EXPECT_GT(n, 0u);
  EXPECT_LE(n, kMaxEventsPerPage);
  EXPECT_LE(page->ByteSizeLong(), kMaxPageBytes + 1'000);
  EXPECT_TRUE(page->truncated());
  ASSERT_FALSE(page->next_cursor().empty());

  request.set_limit(0);  // the default: not clamped
  while (!page->next_cursor().empty()) {
    request.set_cursor(page->next_cursor());
    page = engine->GetEvents(request);
    ASSERT_TRUE(page.ok()) << page.status();
    EXPECT_EQ(page->limit_clamped_to(), 0u);
    for (const auto& p : page->processes()) n += static_cast<uint64_t>(p.events_size());
  }
  EXPECT_EQ(n, kProcesses * kEventsPerProcess);
}

TEST_F(EventPagesTest, ACursorThatIsNotThisQuerysIsInvalidArgumentInOneLine) {
  auto engine = parts_.Engine();
  v1::GetEventsRequest request;
  request.set_job_id("big");
  request.set_limit(10);
  absl::StatusOr<v1::GetEventsResponse> first = engine->GetEvents(request);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_FALSE(first->next_cursor().empty());

  for (const std::string& bad : {std::string("not a cursor!"), std::string("ZTEuMS4yLjM"),
                                first->next_cursor().substr(0, 10), std::string(500, 'A')}) {
    request.set_cursor(bad);
    absl::StatusOr<v1::GetEventsResponse> page = engine->GetEvents(request);
    ASSERT_EQ(page.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(page.status().message().find('\n'), std::string::npos);
    EXPECT_NE(page.status().message().find("bad cursor"), std::string::npos);
  }
  // A good cursor, handed to another window of the job.
  request.set_cursor(first->next_cursor());
  request.set_to_ns(1'000'000);
  absl::StatusOr<v1::GetEventsResponse> page = engine->GetEvents(request);
  ASSERT_EQ(page.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(page.status().message().find("another query"), std::string::npos)
      << page.status().message();
}

}  // namespace
}  // namespace gpuspy::collector
