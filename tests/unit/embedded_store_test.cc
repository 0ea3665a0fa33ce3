// The embedded store beyond the interface tests every backend passes (storage_test.cc): the
// segment record format on its own, schema versioning, segment files and their size limit, the
// recovery cases (corrupt records, unacknowledged tails, a segment shorter than its index, missing
// and orphan segment files, a lost index), a full disk, on-disk stats and fsync mode.
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "absl/time/clock.h"
#include "collector/storage/index_check.h"
#include "collector/storage/payload_codec.h"
#include "collector/storage/segment_file.h"
#include "collector/storage/store.h"
#include "tests/support/store_fixtures.h"
#include "tests/support/subprocess.h"

namespace gpuspy::collector {
namespace {

namespace fs = std::filesystem;

using gpuspy::testing::TestIdentity;

int64_t NowNs() { return absl::ToUnixNanos(absl::Now()); }

v1::ProcessIdentity Identity(const std::string& key, const std::string& job) {
  return gpuspy::testing::TestIdentity(key, job);
}

// The record a process's identity takes at the front of its first segment (segment_file.h).
uint64_t IdentityRecordBytes(const v1::ProcessIdentity& identity) {
  return kSegmentHeaderBytes + identity.SerializeAsString().size();
}

StoredBatch Batch(uint64_t process, uint64_t seq, int64_t min_ns, int64_t max_ns,
                  size_t payload_bytes = 100) {
  return gpuspy::testing::TestBatch(process, seq, min_ns, max_ns, payload_bytes, 3);
}

std::vector<uint64_t> Sequences(const std::vector<StoredBatch>& batches) {
  std::vector<uint64_t> out;
  for (const StoredBatch& b : batches) out.push_back(b.sequence);
  return out;
}

// Runs `sql` against the index directly (the store must be closed).
void Sql(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  EXPECT_EQ(rc, SQLITE_OK) << (err != nullptr ? err : "") << " in " << sql;
  sqlite3_free(err);
  sqlite3_close(db);
}

int64_t SqlInt(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sql;
  int64_t v = -1;
  if (stmt != nullptr && sqlite3_step(stmt) == SQLITE_ROW) v = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return v;
}

// ---- segment files on their own -----------------------------------------------------------

class SegmentFileTest : public ::testing::Test {
 protected:
  testing::TempDir dir_;
  std::string path_ = dir_.path() + "/seg.gseg";
};

TEST_F(SegmentFileTest, AppendReturnsOffsetsAndReadVerifiesEveryField) {
  auto w = SegmentWriter::Open(path_);
  ASSERT_TRUE(w.ok()) << w.status();
  auto a = (*w)->Append(7, 1, "hello");
  auto b = (*w)->Append(7, 2, std::string(1000, 'x'));
  auto c = (*w)->Append(8, 1, "");
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(*a, 0u);
  EXPECT_EQ(*b, kSegmentHeaderBytes + 5);
  EXPECT_EQ(*c, *b + kSegmentHeaderBytes + 1000);
  EXPECT_EQ((*w)->size(), *c + kSegmentHeaderBytes);
  EXPECT_EQ(fs::file_size(path_), (*w)->size());

  const int fd = open(path_.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(*ReadSegmentRecord(fd, path_, *a, 5, 7, 1), "hello");
  EXPECT_EQ(*ReadSegmentRecord(fd, path_, *b, 1000, 7, 2), std::string(1000, 'x'));
  EXPECT_EQ(*ReadSegmentRecord(fd, path_, *c, 0, 8, 1), "");
  // Anything that does not match the index is data loss, never someone else's bytes.
  EXPECT_EQ(ReadSegmentRecord(fd, path_, *a, 5, 7, 2).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(ReadSegmentRecord(fd, path_, *a, 5, 9, 1).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(ReadSegmentRecord(fd, path_, *a, 4, 7, 1).status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(ReadSegmentRecord(fd, path_, *a + 1, 5, 7, 1).status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(ReadSegmentRecord(fd, path_, (*w)->size(), 5, 7, 1).status().code(),
            absl::StatusCode::kDataLoss);
  close(fd);
}

TEST_F(SegmentFileTest, ZstdFlaggedRecordIsDecompressedAndGarbageUnderTheFlagIsDataLoss) {
  auto w = SegmentWriter::Open(path_);
  ASSERT_TRUE(w.ok()) << w.status();
  const std::string raw(50'000, 'q');
  const std::string packed = CompressPayload(raw);
  ASSERT_LT(packed.size(), raw.size() / 10);
  auto a = (*w)->Append(7, 1, packed, kSegmentFlagZstd);
  auto b = (*w)->Append(7, 2, "not zstd at all", kSegmentFlagZstd);
  ASSERT_TRUE(a.ok() && b.ok());
  const int fd = open(path_.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(*ReadSegmentRecord(fd, path_, *a, packed.size(), 7, 1), raw);
  absl::StatusOr<std::string> bad = ReadSegmentRecord(fd, path_, *b, 15, 7, 2);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(bad.status().message().find("not a zstd frame"), std::string::npos) << bad.status();
  close(fd);
  EXPECT_EQ(DecompressPayload(packed, 1000).status().code(), absl::StatusCode::kDataLoss)
      << "a frame claiming more than the limit is refused before allocating";
}

TEST_F(SegmentFileTest, FlippedPayloadByteFailsTheChecksum) {
  auto w = SegmentWriter::Open(path_);
  ASSERT_TRUE((*w)->Append(1, 1, "payload-bytes").ok());
  {
    std::fstream f(path_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(kSegmentHeaderBytes + 3);
    f.put('?');
  }
  const int fd = open(path_.c_str(), O_RDONLY);
  auto r = ReadSegmentRecord(fd, path_, 0, 13, 1, 1);
  close(fd);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("checksum"), std::string_view::npos);
  EXPECT_NE(r.status().message().find(path_), std::string_view::npos);
}

TEST_F(SegmentFileTest, ReopenContinuesAtTheEndAndTruncateCuts) {
  uint64_t end = 0;
  {
    auto w = SegmentWriter::Open(path_);
    ASSERT_TRUE((*w)->Append(1, 1, "one").ok());
    end = (*w)->size();
    ASSERT_TRUE((*w)->Append(1, 2, "two").ok());
    ASSERT_TRUE((*w)->Sync().ok());
  }
  auto w = SegmentWriter::Open(path_);
  EXPECT_EQ((*w)->size(), end + kSegmentHeaderBytes + 3);
  ASSERT_TRUE((*w)->Truncate(end).ok());
  EXPECT_EQ(fs::file_size(path_), end);
  auto off = (*w)->Append(1, 3, "three");
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(*off, end);
}

// EFBIG from RLIMIT_FSIZE stands in for a full disk; in a child so the test process keeps its
// limits.
TEST_F(SegmentFileTest, FailedWriteIsResourceExhaustedNamesTheFileAndLeavesNoPartialRecord) {
  auto w = SegmentWriter::Open(path_);
  ASSERT_TRUE((*w)->Append(1, 1, std::string(500, 'a')).ok());
  const uint64_t before = (*w)->size();
  const pid_t child = fork();
  if (child == 0) {
    signal(SIGXFSZ, SIG_IGN);
    rlimit lim{before + 64, RLIM_INFINITY};  // room for part of the next record only
    setrlimit(RLIMIT_FSIZE, &lim);
    absl::StatusOr<uint64_t> r = (*w)->Append(1, 2, std::string(4000, 'b'));
    if (r.status().code() != absl::StatusCode::kResourceExhausted) _exit(10);
    if (r.status().message().find(path_) == std::string_view::npos) _exit(11);
    if (r.status().message().find("File too large") == std::string_view::npos) _exit(12);
    if (fs::file_size(path_) != before || (*w)->size() != before) _exit(13);
    lim.rlim_cur = RLIM_INFINITY;
    setrlimit(RLIMIT_FSIZE, &lim);
    absl::StatusOr<uint64_t> again = (*w)->Append(1, 2, std::string(4000, 'b'));
    if (!again.ok() || *again != before) _exit(14);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// ---- the store -------------------------------------------------------------------------------

class EmbeddedStoreTest : public ::testing::Test {
 protected:
  absl::StatusOr<std::unique_ptr<Store>> TryOpen(uint64_t segment_bytes = 1 << 20,
                                                 bool fsync_each_batch = false, bool compress = true) {
    EmbeddedStoreOptions o;
    o.data_dir = data_;
    o.compress = compress;
    o.segment_max_bytes = segment_bytes;
    o.fsync_each_batch = fsync_each_batch;
    return OpenEmbeddedStore(o);
  }
  std::unique_ptr<Store> Open(uint64_t segment_bytes = 1 << 20, bool fsync_each_batch = false) {
    auto s = TryOpen(segment_bytes, fsync_each_batch);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? std::move(*s) : nullptr;
  }
  std::vector<fs::path> Segments() const {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(data_ + "/segments")) {
      if (e.path().extension() == ".gseg") out.push_back(e.path());
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  std::string Index() const { return data_ + "/index.sqlite"; }

  testing::TempDir dir_;
  std::string data_ = dir_.path() + "/data";
};

TEST_F(EmbeddedStoreTest, IndexIsAtTheCurrentSchemaVersion) {
  { auto store = Open(); }
  EXPECT_EQ(SqlInt(Index(), "PRAGMA user_version"), 7);
  EXPECT_EQ(SqlInt(Index(), "SELECT COUNT(*) FROM pragma_table_info('segments') "
                            "WHERE name IN ('path', 'sealed')"),
            2);
  EXPECT_EQ(SqlInt(Index(), "SELECT COUNT(*) FROM pragma_table_info('batches') "
                            "WHERE name IN ('cupti_dropped', 'queue_dropped', 'spill_dropped')"),
            3);
  EXPECT_EQ(SqlInt(Index(), "SELECT COUNT(*) FROM pragma_index_list('processes') "
                            "WHERE name = 'processes_by_job'"),
            1);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(Index().c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &stmt, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)), "wal");
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

TEST_F(EmbeddedStoreTest, VersionOneDataDirIsMigratedAndStaysReadable) {
  uint64_t id = 0;
  {
    auto store = Open(/*segment_bytes=*/1024);
    id = *store->UpsertProcess(Identity("p", "j"), 1);
    for (uint64_t seq = 1; seq <= 6; ++seq) ASSERT_TRUE(store->AppendBatch(Batch(id, seq, seq, seq, 400)).ok());
  }
  ASSERT_GE(Segments().size(), 3u);
  // Turn it back into what schema 1 wrote.
  Sql(Index(), "ALTER TABLE segments DROP COLUMN path; ALTER TABLE segments DROP COLUMN sealed; "
               "ALTER TABLE batches DROP COLUMN cupti_dropped; "
               "ALTER TABLE batches DROP COLUMN queue_dropped; "
               "ALTER TABLE batches DROP COLUMN spill_dropped; DROP TABLE job_settings; ALTER TABLE processes DROP COLUMN pending; PRAGMA user_version=1;");
  ASSERT_EQ(SqlInt(Index(), "PRAGMA user_version"), 1);
  {
    auto store = Open(1024);
    EXPECT_EQ(Sequences(*store->ReadBatches(id, 0, 0)), (std::vector<uint64_t>{1, 2, 3, 4, 5, 6}));
    EXPECT_TRUE(store->AppendBatch(Batch(id, 7, 7, 7, 400)).ok());
  }
  EXPECT_EQ(SqlInt(Index(), "PRAGMA user_version"), 7);
  // Every segment but the newest is sealed; paths are filled in.
  EXPECT_EQ(SqlInt(Index(), "SELECT COUNT(*) FROM segments WHERE sealed = 0"), 1);
  EXPECT_EQ(SqlInt(Index(), "SELECT sealed FROM segments ORDER BY segment_id DESC LIMIT 1"), 0);
  EXPECT_EQ(SqlInt(Index(), "SELECT COUNT(*) FROM segments WHERE path NOT LIKE 'segments/seg-%.gseg'"),
            0);
}

TEST_F(EmbeddedStoreTest, VersionFiveDataDirGetsJobSettingsAndKeepsItsSteps) {
  uint64_t id = 0;
  {
    auto store = Open();
    id = *store->UpsertProcess(Identity("p", "j"), 1);
    ASSERT_TRUE(store->AppendBatch(Batch(id, 1, 10, 20)).ok());
    ASSERT_TRUE(store->UpsertSteps({{id, 1, 10, 20, "nvtx:ProfilerStep#(\\d+)"}}).ok());
  }
  // What gpuspyd wrote before per-job step patterns.
  Sql(Index(), "DROP TABLE job_settings; ALTER TABLE processes DROP COLUMN pending; PRAGMA user_version=5;");
  {
    auto store = Open();
    EXPECT_EQ(*store->GetJobStepPattern("j"), "");  // none: gpuspyd's applies
    ASSERT_TRUE(store->SetJobStepPattern("j", "train_step_(\\d+)").ok());
    EXPECT_EQ(store->ListSteps(id)->size(), 1u);
  }
  EXPECT_EQ(SqlInt(Index(), "PRAGMA user_version"), 7);
  auto store = Open();
  EXPECT_EQ(*store->GetJobStepPattern("j"), "train_step_(\\d+)");
}

TEST_F(EmbeddedStoreTest, BatchMarksCarryEachBatchsLossAndVersionTwoRowsReadAsNone) {
  uint64_t id = 0;
  {
    auto store = Open();
    id = *store->UpsertProcess(Identity("p", "j"), 1);
    ASSERT_TRUE(store->AppendBatch(Batch(id, 1, 10, 20)).ok());
  }
  // A data dir from before the loss columns.
  Sql(Index(), "ALTER TABLE batches DROP COLUMN cupti_dropped; "
               "ALTER TABLE batches DROP COLUMN queue_dropped; "
               "ALTER TABLE batches DROP COLUMN spill_dropped; DROP TABLE job_settings; ALTER TABLE processes DROP COLUMN pending; PRAGMA user_version=2;");
  auto store = Open();
  StoredBatch b = Batch(id, 3, 30, 40);
  b.loss = {5, 0, 700};
  ASSERT_TRUE(store->AppendBatch(b).ok());
  auto marks = store->ListBatchMarks(id);
  ASSERT_TRUE(marks.ok()) << marks.status();
  ASSERT_EQ(marks->size(), 2u);
  EXPECT_EQ((*marks)[0].sequence, 1u);
  EXPECT_EQ((*marks)[0].loss.total(), 0u);
  EXPECT_EQ((*marks)[1].sequence, 3u);
  EXPECT_EQ((*marks)[1].min_ns, 30);
  EXPECT_EQ((*marks)[1].max_ns, 40);
  EXPECT_EQ((*marks)[1].loss.cupti_dropped_records, 5u);
  EXPECT_EQ((*marks)[1].loss.spill_dropped_events, 700u);
}

TEST_F(EmbeddedStoreTest, NewerSchemaIsRefused) {
  { auto store = Open(); }
  Sql(Index(), "PRAGMA user_version=99");
  auto s = TryOpen();
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition);
}

// A damaged header makes SQLite say "file is not a database": the message says what to do.
TEST_F(EmbeddedStoreTest, IndexWithADamagedHeaderPointsToRebuildIndex) {
  { auto store = Open(); }
  fs::remove(Index() + "-wal");
  fs::remove(Index() + "-shm");
  {
    std::fstream f(Index(), std::ios::in | std::ios::out | std::ios::binary);
    f.write("this is not sqlite", 18);
  }
  auto s = TryOpen();
  EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss) << s.status();
  EXPECT_NE(s.status().message().find("gpuspyd --rebuild-index"), absl::string_view::npos)
      << s.status();
}

// What a failed open of the index says: a full disk (SQLITE_FULL, or "disk I/O error" with no
// space left) says the disk is full; anything else on a disk with room is passed on as it was.
TEST_F(EmbeddedStoreTest, IndexOpenErrorsSayWhatToDo) {
  const absl::Status full =
      ExplainIndexOpenError(absl::ResourceExhaustedError("sqlite: database or disk is full"),
                            Index(), dir_.path());
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(full.message().find("the disk holding " + dir_.path() + " is full"),
            absl::string_view::npos) << full;
  const absl::Status damaged =
      ExplainIndexOpenError(absl::DataLossError("sqlite: file is not a database"), Index(),
                            dir_.path());
  EXPECT_NE(damaged.message().find("--rebuild-index"), absl::string_view::npos) << damaged;
  const absl::Status other = absl::InternalError("sqlite: disk I/O error");
  EXPECT_EQ(ExplainIndexOpenError(other, Index(), dir_.path()), other);  // this disk has room
}

TEST_F(EmbeddedStoreTest, CompleteButUnindexedRecordIsCutOnReopen) {
  uint64_t id = 0;
  {
    auto store = Open();
    id = *store->UpsertProcess(Identity("p", "j"), 1);
    for (uint64_t seq = 1; seq <= 3; ++seq) ASSERT_TRUE(store->AppendBatch(Batch(id, seq, seq, seq)).ok());
  }
  const fs::path seg = Segments().back();
  const uint64_t indexed = fs::file_size(seg);
  {
    // A crash between the segment write and the index commit: a whole, valid record that was
    // never acknowledged.
    auto w = SegmentWriter::Open(seg.string());
    ASSERT_TRUE((*w)->Append(id, 4, "never acknowledged").ok());
  }
  ASSERT_GT(fs::file_size(seg), indexed);
  auto store = Open();
  EXPECT_EQ(fs::file_size(seg), indexed);
  EXPECT_EQ(Sequences(*store->ReadBatches(id, 0, 0)), (std::vector<uint64_t>{1, 2, 3}));
  // The sender retries sequence 4: it is accepted, and what reads back is the retry.
  StoredBatch retry = Batch(id, 4, 4, 4);
  ASSERT_TRUE(store->AppendBatch(retry).ok());
  auto all = store->ReadBatches(id, 0, 0);
  ASSERT_EQ(all->size(), 4u);
  EXPECT_EQ(all->back().payload, retry.payload);
  EXPECT_EQ(store->GetProcess(id)->batch_count, 4u);
}

TEST_F(EmbeddedStoreTest, ActiveSegmentShorterThanItsIndexIsNotOverwritten) {
  uint64_t id = 0;
  {
    auto store = Open();
    id = *store->UpsertProcess(Identity("p", "j"), 1);
    for (uint64_t seq = 1; seq <= 3; ++seq) ASSERT_TRUE(store->AppendBatch(Batch(id, seq, seq, seq)).ok());
  }
  // Lost acknowledged bytes (e.g. power loss without fsync): the last record is cut in half.
  fs::resize_file(Segments().back(),
                  IdentityRecordBytes(Identity("p", "j")) + 2 * (kSegmentHeaderBytes + 100) + 40);
  auto store = Open();
  // Writing moved on to a new segment, which also took the two intact records; the cut one went
  // to quarantine/ and its lost record is counted there.
  ASSERT_EQ(Segments().size(), 1u);
  EXPECT_EQ(store->Stats().segments_quarantined, 1u);
  EXPECT_EQ(store->Stats().records_lost, 1u);
  EXPECT_EQ(Sequences(*store->ReadBatches(id, 0, 0)), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(store->Stats().corrupt_records, 0u);
  ASSERT_TRUE(store->AppendBatch(Batch(id, 4, 4, 4)).ok());
  auto all = store->ReadBatches(id, 0, 0);
  EXPECT_EQ(Sequences(*all), (std::vector<uint64_t>{1, 2, 4}));
  EXPECT_EQ(all->back().payload, Batch(id, 4, 4, 4).payload);
}

TEST_F(EmbeddedStoreTest, OrphanSegmentFilesAreRemovedOnOpen) {
  uint64_t id = 0;
  {
    auto store = Open();
    id = *store->UpsertProcess(Identity("p", "j"), 1);
    ASSERT_TRUE(store->AppendBatch(Batch(id, 1, 1, 1)).ok());
  }
  { std::ofstream(data_ + "/segments/seg-00000099.gseg") << "left by an interrupted eviction"; }
  { std::ofstream(data_ + "/segments/README.txt") << "not a segment"; }
  auto store = Open();
  EXPECT_FALSE(fs::exists(data_ + "/segments/seg-00000099.gseg"));
  EXPECT_TRUE(fs::exists(data_ + "/segments/README.txt"));
  EXPECT_EQ(Sequences(*store->ReadBatches(id, 0, 0)), (std::vector<uint64_t>{1}));
  EXPECT_EQ(store->Stats().segments, 1u);  // foreign files are not segments
}

TEST_F(EmbeddedStoreTest, SegmentsWithoutTheirIndexRefuseToOpenAndAreKept) {
  {
    auto store = Open();
    auto id = *store->UpsertProcess(Identity("p", "j"), 1);
    ASSERT_TRUE(store->AppendBatch(Batch(id, 1, 1, 1)).ok());
  }
  for (const char* f : {"/index.sqlite", "/index.sqlite-wal", "/index.sqlite-shm"}) {
    fs::remove(data_ + f);
  }
  const auto before = fs::file_size(Segments().front());
  auto s = TryOpen();
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition) << s.status();
  ASSERT_EQ(Segments().size(), 1u);
  EXPECT_EQ(fs::file_size(Segments().front()), before);
}

TEST_F(EmbeddedStoreTest, BatchForUnknownProcessIsNotFoundAndWritesNothing) {
  auto store = Open();
  const auto before = fs::file_size(Segments().front());
  EXPECT_EQ(store->AppendBatch(Batch(42, 1, 1, 1)).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(fs::file_size(Segments().front()), before);
  EXPECT_EQ(store->Stats().batches, 0u);
}

// The identities in the segment files that exist now: what --rebuild-index can find.
std::map<uint64_t, std::string> IdentitiesOnDisk(const std::vector<fs::path>& segments) {
  std::map<uint64_t, std::string> out;
  for (const fs::path& p : segments) {
    uint64_t unreadable = 0;
    auto records = ScanSegmentRecords(p.string(), &unreadable);
    EXPECT_TRUE(records.ok()) << records.status();
    EXPECT_EQ(unreadable, 0u) << p;
    const int fd = open(p.c_str(), O_RDONLY);
    for (const ScannedRecord& r : *records) {
      if (r.sequence != kIdentityRecordSequence) continue;
      auto bytes = ReadSegmentRecord(fd, p.string(), r.offset, r.length, r.process_id, r.sequence);
      EXPECT_TRUE(bytes.ok()) << bytes.status();
      v1::ProcessIdentity id;
      EXPECT_TRUE(bytes.ok() && id.ParseFromString(*bytes));
      out[r.process_id] = id.job_id();
    }
    close(fd);
  }
  return out;
}

// Segments hold every process's identity, also after the segment it was first written to is
// evicted (it is carried into the active one) and after a change of identity.
TEST_F(EmbeddedStoreTest, SegmentsKeepEveryIdentityThroughEvictionAndChange) {
  auto store = Open(/*segment_bytes=*/2048);
  const uint64_t a = *store->UpsertProcess(Identity("a", "job-a"), 1);
  const uint64_t b = *store->UpsertProcess(Identity("b", "job-b"), 1);
  for (uint64_t seq = 1; seq <= 10; ++seq) ASSERT_TRUE(store->AppendBatch(Batch(a, seq, seq, seq, 600)).ok());
  ASSERT_GT(*store->EnforceRetention({/*max_bytes=*/3000, 0}, NowNs()), 0u);
  EXPECT_EQ(IdentitiesOnDisk(Segments()), (std::map<uint64_t, std::string>{{a, "job-a"}, {b, "job-b"}}));
  ASSERT_EQ(*store->UpsertProcess(Identity("b", "job-b2"), 2), b);
  EXPECT_EQ(IdentitiesOnDisk(Segments())[b], "job-b2");  // the last record of a process counts
  EXPECT_EQ(store->Stats().batches, store->ReadBatches(a, 0, 0)->size());  // identities are not batches
}

// One segment file as --rebuild-index reads it: the processes it has batches of, and the process
// of each identity record in it (in file order, a repeat listed twice).
struct SegmentContents {
  std::set<uint64_t> batches_of;
  std::vector<uint64_t> identities;
};
SegmentContents ContentsOf(const fs::path& p) {
  SegmentContents out;
  uint64_t unreadable = 0;
  auto records = ScanSegmentRecords(p.string(), &unreadable);
  EXPECT_TRUE(records.ok()) << records.status();
  EXPECT_EQ(unreadable, 0u) << p;
  for (const ScannedRecord& r : *records) {
    if (r.sequence == kIdentityRecordSequence) {
      out.identities.push_back(r.process_id);
    } else {
      out.batches_of.insert(r.process_id);
    }
  }
  return out;
}

// A lost segment must not take a process's name with it (issue 45: a rebuild after losing the
// first segment listed the rest of a job under "unknown"), so every segment names the processes
// it holds, once each. A process that stopped sending is named only where its batches are.
TEST_F(EmbeddedStoreTest, EverySegmentNamesEachProcessItHoldsOnce) {
  auto store = Open(/*segment_bytes=*/2048);
  const uint64_t a = *store->UpsertProcess(Identity("a", "job"), 1);
  const uint64_t b = *store->UpsertProcess(Identity("b", "job"), 1);
  const uint64_t early = *store->UpsertProcess(Identity("early", "other-job"), 1);
  ASSERT_TRUE(store->AppendBatch(Batch(early, 1, 1, 1, 300)).ok());
  for (uint64_t seq = 1; seq <= 12; ++seq) {
    ASSERT_TRUE(store->AppendBatch(Batch(a, seq, seq, seq, 300)).ok());
    ASSERT_TRUE(store->AppendBatch(Batch(b, seq, seq, seq, 300)).ok());
  }
  const std::vector<fs::path> segments = Segments();
  ASSERT_GE(segments.size(), 4u);
  const SegmentContents first = ContentsOf(segments[0]);
  EXPECT_EQ(first.batches_of, (std::set<uint64_t>{a, b, early}));
  EXPECT_EQ(first.identities, (std::vector<uint64_t>{a, b, early}));  // written by UpsertProcess
  for (size_t i = 1; i < segments.size(); ++i) {
    const SegmentContents c = ContentsOf(segments[i]);
    EXPECT_EQ(c.batches_of, (std::set<uint64_t>{a, b})) << segments[i];
    EXPECT_EQ(std::set<uint64_t>(c.identities.begin(), c.identities.end()), c.batches_of) << segments[i];
    EXPECT_EQ(c.identities.size(), c.batches_of.size()) << segments[i] << ": an identity repeated";
  }
  // The index points at the newest copy: batches read back as before, identities are not batches.
  EXPECT_EQ(store->ReadBatches(a, 0, 0)->size(), 12u);
  EXPECT_EQ(store->Stats().batches, 25u);
}

// The active segment already naming a process is known from the index, not from memory: a
// restart does not write the identity again into the segment it continues.
TEST_F(EmbeddedStoreTest, ReopeningDoesNotRepeatAnIdentityInTheActiveSegment) {
  uint64_t id = 0;
  {
    auto store = Open();
    id = *store->UpsertProcess(Identity("p", "j"), 1);
    ASSERT_TRUE(store->AppendBatch(Batch(id, 1, 1, 1)).ok());
  }
  auto store = Open();
  ASSERT_TRUE(store->AppendBatch(Batch(id, 2, 2, 2)).ok());
  ASSERT_EQ(Segments().size(), 1u);
  EXPECT_EQ(ContentsOf(Segments().front()).identities, (std::vector<uint64_t>{id}));
}

// A data dir from before identity records: each process gets one on open, so it can be rebuilt.
TEST_F(EmbeddedStoreTest, VersionThreeDataDirGetsItsIdentityRecordsOnOpen) {
  uint64_t id = 0;
  {
    auto store = Open();
    id = *store->UpsertProcess(Identity("p", "old-job"), 1);
    ASSERT_TRUE(store->AppendBatch(Batch(id, 1, 1, 1)).ok());
  }
  Sql(Index(), "DELETE FROM batches WHERE sequence = 0; DROP TABLE job_settings; ALTER TABLE processes DROP COLUMN pending; PRAGMA user_version=3;");
  for (const fs::path& p : Segments()) fs::remove(p);  // and no identity in the segments either
  Sql(Index(), "DELETE FROM batches; DELETE FROM segments;");
  {
    auto store = Open();
    EXPECT_EQ(store->Stats().batches, 0u);
  }
  EXPECT_EQ(SqlInt(Index(), "SELECT COUNT(*) FROM batches WHERE sequence = 0"), 1);
  EXPECT_EQ(IdentitiesOnDisk(Segments()), (std::map<uint64_t, std::string>{{id, "old-job"}}));
}

TEST_F(EmbeddedStoreTest, StatsDescribeWhatIsOnDisk) {
  auto store = Open(/*segment_bytes=*/2048);
  auto id = *store->UpsertProcess(Identity("p", "j"), 1);
  for (uint64_t seq = 1; seq <= 10; ++seq) ASSERT_TRUE(store->AppendBatch(Batch(id, seq, seq, seq, 600)).ok());
  StoreStats s = store->Stats();
  EXPECT_EQ(s.batches, 10u);
  EXPECT_EQ(s.segments, Segments().size());
  uint64_t segment_bytes = 0;
  for (const auto& p : Segments()) segment_bytes += fs::file_size(p);
  // Each segment starts with the identity of the process whose batches it holds.
  EXPECT_EQ(segment_bytes,
            Segments().size() * IdentityRecordBytes(Identity("p", "j")) + 10u * (kSegmentHeaderBytes + 600));
  EXPECT_GT(s.bytes_on_disk, segment_bytes);  // plus the index
  EXPECT_EQ(s.corrupt_records, 0u);
  EXPECT_EQ(s.write_errors, 0u);
  ASSERT_GT(*store->EnforceRetention({/*max_bytes=*/3000, 0}, NowNs()), 0u);
  EXPECT_LT(store->Stats().batches, 10u);
  EXPECT_LT(store->Stats().segments, s.segments);
}

TEST_F(EmbeddedStoreTest, CompressibleBatchesAreZstdAtRestAndReadBackIntact) {
  // What real batches look like to a compressor: repetitive columns of small varints.
  std::string payload;
  for (int i = 0; i < 20'000; ++i) payload += static_cast<char>(i % 7 == 0 ? 0x81 : 0x02 + i % 3);
  {
    auto store = *TryOpen();
    auto id = *store->UpsertProcess(Identity("p", "j"), 1);
    StoredBatch b = Batch(id, 1, 10, 20);
    b.payload = payload;
    ASSERT_TRUE(store->AppendBatch(b).ok());
  }
  uint64_t on_disk = 0;
  for (const auto& p : Segments()) on_disk += fs::file_size(p);
  EXPECT_LT(on_disk, payload.size() / 4);
  auto store = *TryOpen();  // and after a reopen (recovery reads the compressed record)
  auto batches = store->ReadBatches(1, 0, 0);
  ASSERT_TRUE(batches.ok()) << batches.status();
  ASSERT_EQ(batches->size(), 1u);
  EXPECT_EQ((*batches)[0].payload, payload);
}

TEST_F(EmbeddedStoreTest, CompressNoneStoresTheWireBytesAsTheyCame) {
  auto store = *TryOpen(1 << 20, false, /*compress=*/false);
  auto id = *store->UpsertProcess(Identity("p", "j"), 1);
  StoredBatch b = Batch(id, 1, 10, 20);
  b.payload = std::string(20'000, 'z');
  ASSERT_TRUE(store->AppendBatch(b).ok());
  uint64_t on_disk = 0;
  for (const auto& p : Segments()) on_disk += fs::file_size(p);
  EXPECT_EQ(on_disk, IdentityRecordBytes(Identity("p", "j")) + kSegmentHeaderBytes + 20'000);
  EXPECT_EQ((*store->ReadBatches(id, 0, 0))[0].payload, b.payload);
}

TEST_F(EmbeddedStoreTest, FsyncEachBatchAcrossRollsAndFlushSurviveReopen) {
  uint64_t id = 0;
  {
    auto store = Open(/*segment_bytes=*/1024, /*fsync_each_batch=*/true);
    id = *store->UpsertProcess(Identity("p", "j"), 1);
    for (uint64_t seq = 1; seq <= 9; ++seq) ASSERT_TRUE(store->AppendBatch(Batch(id, seq, seq, seq, 300)).ok());
    ASSERT_TRUE(store->Flush().ok());
  }
  EXPECT_GE(Segments().size(), 3u);
  EXPECT_EQ(SqlInt(Index(), "SELECT COUNT(*) FROM segments WHERE sealed = 0"), 1);
  auto store = Open(1024, true);
  auto all = store->ReadBatches(id, 0, 0);
  ASSERT_EQ(all->size(), 9u);
  for (const StoredBatch& b : *all) EXPECT_EQ(b.payload, Batch(id, b.sequence, 0, 0, 300).payload);
  auto p = store->GetProcess(id);
  EXPECT_EQ(p->event_count, 27u);
  EXPECT_EQ(p->max_sequence, 9u);
}

TEST_F(EmbeddedStoreTest, SegmentFilesStayWithinTheirSizeLimit) {
  auto store = Open(/*segment_bytes=*/4096);
  auto id = *store->UpsertProcess(Identity("p", "j"), 1);
  for (uint64_t seq = 1; seq <= 40; ++seq) ASSERT_TRUE(store->AppendBatch(Batch(id, seq, seq, seq, 900)).ok());
  EXPECT_EQ(Segments().size(), 10u);
  for (const auto& seg : Segments()) EXPECT_LE(fs::file_size(seg), 4096u);
}

TEST_F(EmbeddedStoreTest, CorruptRecordIsSkippedAndCountedOthersStayReadable) {
  uint64_t id = 0;
  {
    auto store = Open();
    id = *store->UpsertProcess(TestIdentity("p1", "job"), 100);
    for (uint64_t seq = 1; seq <= 3; ++seq) ASSERT_TRUE(store->AppendBatch(Batch(id, seq, seq, seq)).ok());
  }
  {
    // Flip a payload byte of the second record (32-byte header + 100-byte payload each).
    std::fstream f(Segments().front(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(132 + 32 + 50);
    f.put('Z');
  }
  auto store = Open();
  auto batches = store->ReadBatches(id, 0, 0);
  ASSERT_TRUE(batches.ok());
  ASSERT_EQ(batches->size(), 2u);
  EXPECT_EQ((*batches)[0].sequence, 1u);
  EXPECT_EQ((*batches)[1].sequence, 3u);
  EXPECT_EQ(store->Stats().corrupt_records, 1u);
}

TEST_F(EmbeddedStoreTest, DamagedSegmentIsQuarantinedItsGoodRecordsKeptAndTheLossCountedOnce) {
  uint64_t id = 0;
  {
    auto store = Open(/*segment_bytes=*/1024);
    id = *store->UpsertProcess(TestIdentity("p1", "job"), 100);
    for (uint64_t seq = 1; seq <= 10; ++seq) {
      ASSERT_TRUE(store->AppendBatch(Batch(id, seq, seq, seq, 400)).ok());
    }
  }
  const fs::path damaged = Segments().front();  // sealed: records 1 and 2 (432 bytes each)
  {
    std::fstream f(damaged, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(432 + 32 + 100);  // inside the second record's payload
    f.put('Z');
  }
  auto store = Open(1024);
  auto first = store->ReadBatches(id, 0, 0);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(Sequences(*first), (std::vector<uint64_t>{1, 3, 4, 5, 6, 7, 8, 9, 10}));
  StoreStats stats = store->Stats();
  EXPECT_EQ(stats.corrupt_records, 1u);
  EXPECT_EQ(stats.segments_quarantined, 1u);
  EXPECT_EQ(stats.records_lost, 1u);
  // The file went aside with a note; its good record now lives in the active segment.
  EXPECT_FALSE(fs::exists(damaged));
  const fs::path aside = damaged.parent_path() / "quarantine" / damaged.filename();
  EXPECT_TRUE(fs::exists(aside));
  EXPECT_NE(gpuspy::testing::ReadFile(aside.string() + ".why").find("checksum mismatch"),
            std::string::npos);
  // Reading again finds nothing wrong: the loss is reported once, as a missing batch.
  auto again = store->ReadBatches(id, 0, 0);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(Sequences(*again), Sequences(*first));
  EXPECT_EQ(store->Stats().corrupt_records, 1u);
  EXPECT_EQ(store->GetProcess(id)->sequence_gaps(), 1u);
  EXPECT_EQ(store->GetProcess(id)->event_count, 9u * 3) << "the lost batch's events still counted";
  // And so it stays after a restart, with new batches going on as before.
  store.reset();
  store = Open(1024);
  ASSERT_TRUE(store->AppendBatch(Batch(id, 11, 11, 11, 400)).ok());
  auto reopened = store->ReadBatches(id, 0, 0);
  ASSERT_TRUE(reopened.ok());
  EXPECT_EQ(reopened->size(), 10u);
  EXPECT_EQ(reopened->front().payload, Batch(id, 1, 1, 1, 400).payload);
  EXPECT_EQ(store->Stats().corrupt_records, 0u);
}

TEST_F(EmbeddedStoreTest, TruncatedSealedSegmentIsQuarantinedOnOpen) {
  uint64_t id = 0;
  {
    auto store = Open(/*segment_bytes=*/1024);
    id = *store->UpsertProcess(TestIdentity("p1", "job"), 100);
    for (uint64_t seq = 1; seq <= 10; ++seq) {
      ASSERT_TRUE(store->AppendBatch(Batch(id, seq, seq, seq, 400)).ok());
    }
  }
  const fs::path cut = Segments()[1];  // records 3 and 4
  fs::resize_file(cut, 432 + 100);     // the second record cut short
  auto store = Open(1024);
  EXPECT_EQ(store->Stats().segments_quarantined, 1u);
  EXPECT_TRUE(fs::exists(cut.parent_path() / "quarantine" / cut.filename()));
  auto left = store->ReadBatches(id, 0, 0);
  ASSERT_TRUE(left.ok());
  EXPECT_EQ(Sequences(*left), (std::vector<uint64_t>{1, 2, 3, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(store->Stats().corrupt_records, 0u) << "found on open, not on every read";
}

TEST_F(EmbeddedStoreTest, UnacknowledgedTailIsCutOnReopen) {
  uint64_t id = 0;
  {
    auto store = Open();
    id = *store->UpsertProcess(TestIdentity("p1", "job"), 100);
    for (uint64_t seq = 1; seq <= 3; ++seq) ASSERT_TRUE(store->AppendBatch(Batch(id, seq, seq, seq)).ok());
  }
  const auto seg = Segments().front();
  const auto indexed = fs::file_size(seg);
  {
    // A crash mid-append: a partial record after the last indexed one.
    std::ofstream f(seg, std::ios::app | std::ios::binary);
    f << std::string(57, 'x');
  }
  auto store = Open();
  EXPECT_EQ(fs::file_size(seg), indexed);
  EXPECT_EQ(store->ReadBatches(id, 0, 0)->size(), 3u);
  ASSERT_TRUE(store->AppendBatch(Batch(id, 4, 4, 4)).ok());
  EXPECT_EQ(store->ReadBatches(id, 0, 0)->size(), 4u);
  EXPECT_EQ(store->Stats().corrupt_records, 0u);
}

TEST_F(EmbeddedStoreTest, MissingSegmentFileDropsOnlyItsBatches) {
  uint64_t id = 0;
  {
    auto store = Open(/*segment_bytes=*/1024);
    id = *store->UpsertProcess(TestIdentity("p1", "job"), 100);
    for (uint64_t seq = 1; seq <= 10; ++seq) ASSERT_TRUE(store->AppendBatch(Batch(id, seq, seq, seq, 400)).ok());
  }
  fs::remove(Segments().front());
  auto store = Open(1024);
  auto left = store->ReadBatches(id, 0, 0);
  ASSERT_TRUE(left.ok());
  EXPECT_FALSE(left->empty());
  EXPECT_LT(left->size(), 10u);
  EXPECT_EQ(left->back().sequence, 10u);
}

// Runs in a child process: RLIMIT_FSIZE makes the segment write fail with EFBIG, exactly like a
// full disk, without touching the test process's own limits.
TEST_F(EmbeddedStoreTest, FullDiskRefusesTheBatchAndKeepsEverythingElse) {
  auto store = Open();
  auto id = store->UpsertProcess(TestIdentity("p1", "job"), 100);
  ASSERT_TRUE(store->AppendBatch(Batch(*id, 1, 1, 2, 1000)).ok());
  const uint64_t seg_size = fs::file_size(Segments().front());
  const pid_t child = fork();
  if (child == 0) {
    signal(SIGXFSZ, SIG_IGN);
    rlimit lim{seg_size + 100, RLIM_INFINITY};
    setrlimit(RLIMIT_FSIZE, &lim);
    absl::Status st = store->AppendBatch(Batch(*id, 2, 2, 3, 5000));
    if (st.code() != absl::StatusCode::kResourceExhausted) _exit(10);
    if (st.message().find("File too large") == std::string_view::npos) _exit(11);
    // Nothing partial was left behind, and earlier data reads back.
    if (fs::file_size(Segments().front()) != seg_size) _exit(12);
    auto all = store->ReadBatches(*id, 0, 0);
    if (!all.ok() || all->size() != 1) _exit(13);
    // Space comes back: appends work again.
    lim.rlim_cur = RLIM_INFINITY;
    setrlimit(RLIMIT_FSIZE, &lim);
    if (!store->AppendBatch(Batch(*id, 3, 3, 4, 5000)).ok()) _exit(14);
    if (store->Stats().write_errors != 1) _exit(15);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// ---- imports are complete or absent (issue 34) ------------------------------------------------

v1::ProcessIdentity ImportIdentity(const std::string& sha) {
  v1::ProcessIdentity id = Identity("import:" + sha, "imported");
  id.set_content_sha256(sha);
  return id;
}

TEST_F(EmbeddedStoreTest, AnImportIsListedOnlyOnceCommitted) {
  auto store = Open();
  const uint64_t id = *store->UpsertProcess(ImportIdentity("aa"), 1);
  ASSERT_TRUE(store->AppendBatch(Batch(id, 1, 1, 2)).ok());
  EXPECT_TRUE(store->ListProcesses("")->empty());
  EXPECT_TRUE(store->ListProcesses("imported")->empty());
  EXPECT_TRUE(store->FindByContentHash("aa")->empty());
  EXPECT_EQ(store->GetProcess(id)->batch_count, 1u);  // ingest still finds it by id
  ASSERT_TRUE(store->CommitImport(id).ok());
  EXPECT_EQ(store->ListProcesses("imported")->size(), 1u);
  EXPECT_EQ(store->FindByContentHash("aa")->size(), 1u);
  EXPECT_EQ(*store->DiscardPendingImport("import:aa"), 0u);  // committed: not pending any more
}

TEST_F(EmbeddedStoreTest, APendingImportIsDiscardedOnRequestAndOnOpen) {
  {
    auto store = Open();
    const uint64_t a = *store->UpsertProcess(ImportIdentity("aa"), 1);
    const uint64_t b = *store->UpsertProcess(ImportIdentity("bb"), 1);
    const uint64_t live = *store->UpsertProcess(Identity("live", "j"), 1);  // not an import
    for (uint64_t id : {a, b, live}) ASSERT_TRUE(store->AppendBatch(Batch(id, 1, 1, 2)).ok());
    EXPECT_EQ(*store->DiscardPendingImport("import:aa"), 1u);
    EXPECT_FALSE(store->GetProcess(a).ok());
    EXPECT_EQ(store->ListProcesses("")->size(), 1u);  // "live"
  }
  auto store = Open();  // "bb" was still pending when the store closed
  const auto all = store->ListProcesses("");
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ(all->front().identity.process_key(), "live");
  EXPECT_EQ(SqlInt(Index(), "SELECT COUNT(*) FROM processes"), 1);
  EXPECT_EQ(SqlInt(Index(), "SELECT COUNT(*) FROM batches WHERE process_id != " +
                                std::to_string(all->front().process_id)),
            0);
}

// The index lives on the same disk under the same --retention-bytes: with it uncounted, a store
// of many small batches sat past its limit.
TEST_F(EmbeddedStoreTest, RetentionCountsTheIndex) {
  auto store = Open(/*segment_bytes=*/4096);
  const uint64_t id = *store->UpsertProcess(Identity("p", "j"), 1);
  for (uint64_t seq = 1; seq <= 20; ++seq) ASSERT_TRUE(store->AppendBatch(Batch(id, seq, seq, seq, 900)).ok());
  uint64_t segment_bytes = 0;
  for (const fs::path& p : Segments()) segment_bytes += fs::file_size(p);
  // A limit the segments alone meet, the segments and the index do not.
  ASSERT_GT(store->Stats().bytes_on_disk, segment_bytes + 4096);
  EXPECT_GT(*store->EnforceRetention({/*max_bytes=*/segment_bytes + 1, 0}, NowNs()), 0u);
}

// A segment left world-readable (by hand, or a copy) is made private again when the store opens.
TEST_F(EmbeddedStoreTest, SegmentsAreMadePrivateOnOpen) {
  {
    auto store = Open(/*segment_bytes=*/4096);
    const uint64_t id = *store->UpsertProcess(Identity("p", "j"), 1);
    for (uint64_t seq = 1; seq <= 10; ++seq) ASSERT_TRUE(store->AppendBatch(Batch(id, seq, seq, seq, 900)).ok());
  }
  ASSERT_GE(Segments().size(), 2u);
  for (const fs::path& p : Segments()) fs::permissions(p, fs::perms::all & ~fs::perms::owner_exec & ~fs::perms::group_exec & ~fs::perms::others_exec);
  auto store = Open(/*segment_bytes=*/4096);
  for (const fs::path& p : Segments()) {
    EXPECT_EQ(fs::status(p).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write) << p;
  }
}

}  // namespace
}  // namespace gpuspy::collector
