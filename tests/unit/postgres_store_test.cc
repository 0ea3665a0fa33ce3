// The PostgreSQL store beyond the interface tests every backend passes (storage_test.cc):
// versioned migrations, the one-daemon-per-schema lock, partitions as tables, connection errors
// as statuses, and surviving a server restart or killed connections. Needs the PostgreSQL server
// binaries (skipped with the reason otherwise).
#include <gtest/gtest.h>

#include <thread>

#include "collector/storage/pg_connection.h"
#include "collector/storage/pg_migrations.h"
#include "collector/storage/postgres_store.h"
#include "tests/support/postgres_fixture.h"
#include "tests/support/store_fixtures.h"

namespace gpuspy::collector {
namespace {

using gpuspy::testing::PostgresServer;
using gpuspy::testing::TestIdentity;

StoredBatch Batch(uint64_t process, uint64_t seq, size_t payload_bytes = 100) {
  return gpuspy::testing::TestBatch(process, seq, static_cast<int64_t>(seq),
                                    static_cast<int64_t>(seq) + 1, payload_bytes, 4);
}

class PostgresStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    server_ = gpuspy::testing::SharedPostgres(&why);
    if (server_ == nullptr) GTEST_SKIP() << "PostgreSQL not available: " << why;
    database_ = server_->CreateDatabase(&why);
    ASSERT_FALSE(database_.empty()) << why;
  }
  void TearDown() override {
    if (server_ != nullptr && !database_.empty()) server_->DropDatabase(database_);
  }
  PostgresStoreOptions Options() const {
    PostgresStoreOptions o;
    o.conninfo = server_->Conninfo(database_);
    o.pool_size = 2;
    return o;
  }
  std::unique_ptr<Store> Open(PostgresStoreOptions o) {
    auto s = OpenPostgresStore(o);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? std::move(*s) : nullptr;
  }
  std::unique_ptr<Store> Open() { return Open(Options()); }
  std::string Sql(const std::string& sql) { return server_->QueryValue(database_, sql); }
  std::string Exec(const std::string& sql) { return server_->Exec(database_, sql); }

  PostgresServer* server_ = nullptr;
  std::string database_;
};

TEST_F(PostgresStoreTest, SchemaIsAtTheNewestMigrationWithEveryVersionRecorded) {
  { auto store = Open(); }
  const auto migrations = PgMigrations();
  ASSERT_FALSE(migrations.empty());
  for (size_t i = 0; i < migrations.size(); ++i) EXPECT_EQ(migrations[i].version, static_cast<int>(i + 1));
  EXPECT_EQ(Sql("SELECT count(*) FROM gpuspy.schema_migrations"), std::to_string(migrations.size()));
  EXPECT_EQ(Sql("SELECT max(version) FROM gpuspy.schema_migrations"),
            std::to_string(migrations.back().version));
  EXPECT_EQ(Sql("SELECT name FROM gpuspy.schema_migrations WHERE version = 1"), "001_initial");
  // The indexes the Query service relies on.
  for (const char* index : {"processes_by_job", "dictionary_by_process", "batches_by_key",
                            "batches_by_time", "steps_pkey"}) {
    EXPECT_EQ(Sql(std::string("SELECT count(*) FROM pg_indexes WHERE schemaname = 'gpuspy' AND "
                              "indexname = '") + index + "'"),
              "1")
        << index;
  }
  // Opening again applies nothing twice.
  { auto store = Open(); }
  EXPECT_EQ(Sql("SELECT count(*) FROM gpuspy.schema_migrations"), std::to_string(migrations.size()));
}

TEST_F(PostgresStoreTest, NewerSchemaIsRefused) {
  { auto store = Open(); }
  ASSERT_EQ(Exec("INSERT INTO gpuspy.schema_migrations(version, name) VALUES (999, '999_future')"), "");
  auto s = OpenPostgresStore(Options());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition) << s.status();
  EXPECT_NE(s.status().message().find("newer gpuspyd"), std::string_view::npos) << s.status();
}

// A database written by a gpuspyd that knew only migration 1 (payloads always raw): opening it
// applies the rest, and what was stored reads back next to what is stored now (compressed).
TEST_F(PostgresStoreTest, VersionOneSchemaIsMigratedAndItsRawBatchesStayReadable) {
  {
    PgConnectOptions co;
    co.conninfo = server_->Conninfo(database_);
    co.session_setup = {"SET search_path TO gpuspy"};
    auto conn = PgConnection::Connect(co);
    ASSERT_TRUE(conn.ok()) << conn.status();
    ASSERT_TRUE((*conn)->Run("CREATE SCHEMA gpuspy").ok());
    ASSERT_TRUE(MigratePostgres(**conn, PgMigrations().first(1)).ok());
  }
  ASSERT_EQ(Exec("SET search_path TO gpuspy;"
                 "INSERT INTO processes(process_key, job_id, identity, first_seen_ns, last_seen_ns) "
                 "VALUES ('p', 'j', '', 1, 1);"
                 "CREATE TABLE batches_s0000000001 PARTITION OF batches FOR VALUES IN (1);"
                 "INSERT INTO batch_partitions VALUES (1, 'batches_s0000000001', 1, 1, 5);"
                 "SELECT append_batch(1, 1, 1, 10, 20, 3, 0, 0, 0, 1, 'hello'::bytea);"),
            "");
  ASSERT_EQ(Sql("SELECT max(version) FROM gpuspy.schema_migrations"), "1");
  auto store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(Sql("SELECT max(version) FROM gpuspy.schema_migrations"),
            std::to_string(PgMigrations().back().version));
  StoredBatch now = Batch(1, 2, 50 << 10);
  now.payload = std::string(50 << 10, 'z');  // compresses
  ASSERT_TRUE(store->AppendBatch(now).ok());
  auto all = store->ReadBatches(1, 0, 0);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].payload, "hello");
  EXPECT_EQ((*all)[0].event_count, 3u);
  EXPECT_EQ((*all)[1].payload, now.payload);
  EXPECT_EQ(Sql("SELECT string_agg(payload_zstd::text, ',' ORDER BY sequence) FROM gpuspy.batches"),
            "false,true");
  EXPECT_EQ(store->GetProcess(1)->batch_count, 2u);
  EXPECT_EQ(store->AppendBatch(Batch(1, 1)).code(), absl::StatusCode::kAlreadyExists);
}

TEST_F(PostgresStoreTest, DamagedCompressedPayloadIsSkippedAndCounted) {
  auto store = Open();
  auto id = *store->UpsertProcess(TestIdentity("p", "j"), 1);
  for (uint64_t seq = 1; seq <= 3; ++seq) {
    StoredBatch b = Batch(id, seq);
    b.payload = std::string(10000, static_cast<char>('a' + seq));
    ASSERT_TRUE(store->AppendBatch(b).ok());
  }
  ASSERT_EQ(Exec("UPDATE gpuspy.batches SET payload = 'not zstd' WHERE sequence = 2"), "");
  auto all = store->ReadBatches(id, 0, 0);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].sequence, 1u);
  EXPECT_EQ((*all)[1].sequence, 3u);
  EXPECT_EQ((*all)[1].payload, std::string(10000, 'd'));
  EXPECT_EQ(store->Stats().corrupt_records, 1u);
}

TEST_F(PostgresStoreTest, WithoutCompressionPayloadsAreStoredAsTheyCame) {
  PostgresStoreOptions o = Options();
  o.compress = false;
  auto store = Open(o);
  auto id = *store->UpsertProcess(TestIdentity("p", "j"), 1);
  StoredBatch b = Batch(id, 1);
  b.payload = std::string(10000, 'x');
  ASSERT_TRUE(store->AppendBatch(b).ok());
  EXPECT_EQ(Sql("SELECT payload_zstd::text || ' ' || octet_length(payload) FROM gpuspy.batches"),
            "false 10000");
  EXPECT_EQ(store->ReadBatches(id, 0, 0)->front().payload, b.payload);
}

TEST_F(PostgresStoreTest, FailedMigrationLeavesNothingHalfApplied) {
  // Something in the way of migration 1: a table it wants to create.
  ASSERT_EQ(Exec("CREATE SCHEMA gpuspy; CREATE TABLE gpuspy.steps(x int)"), "");
  auto s = OpenPostgresStore(Options());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("001_initial"), std::string_view::npos) << s.status();
  EXPECT_EQ(Sql("SELECT count(*) FROM gpuspy.schema_migrations"), "0");
  EXPECT_EQ(Sql("SELECT count(*) FROM pg_tables WHERE schemaname = 'gpuspy' AND tablename = 'processes'"), "0");
  // Out of the way, the same migration applies.
  ASSERT_EQ(Exec("DROP TABLE gpuspy.steps"), "");
  auto store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->UpsertProcess(TestIdentity("p", "j"), 1).ok());
}

TEST_F(PostgresStoreTest, OneStorePerSchemaOthersAreRefusedAnotherSchemaIsIndependent) {
  auto first = Open();
  auto second = OpenPostgresStore(Options());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition) << second.status();
  EXPECT_NE(second.status().message().find("in use by another gpuspyd"), std::string_view::npos);

  PostgresStoreOptions other = Options();
  other.schema = "Other Schema";  // quoted identifier
  auto independent = Open(other);
  ASSERT_NE(independent, nullptr);
  ASSERT_TRUE(first->UpsertProcess(TestIdentity("a", "j"), 1).ok());
  EXPECT_TRUE(independent->ListProcesses("")->empty());
  ASSERT_TRUE(independent->UpsertProcess(TestIdentity("b", "j"), 1).ok());
  EXPECT_EQ(first->ListProcesses("")->size(), 1u);

  // Closing the first releases the schema.
  first.reset();
  EXPECT_TRUE(OpenPostgresStore(Options()).ok());
}

TEST_F(PostgresStoreTest, UnreachableServerIsUnavailableAndNamesHostAndPort) {
  // A TCP port nothing listens on: refused at once.
  PostgresStoreOptions o;
  o.conninfo = "host=127.0.0.1 port=1 dbname=gpuspy user=gpuspy connect_timeout=5";
  auto s = OpenPostgresStore(o);
  ASSERT_EQ(s.status().code(), absl::StatusCode::kUnavailable) << s.status();
  EXPECT_NE(s.status().message().find("127.0.0.1"), std::string_view::npos) << s.status();
  EXPECT_NE(s.status().message().find("port=1 "), std::string_view::npos) << s.status();
  // A unix socket directory without a server.
  o.conninfo = "postgresql://gpuspy@%2Fnonexistent%2Fgpuspy:5999/db";
  s = OpenPostgresStore(o);
  ASSERT_EQ(s.status().code(), absl::StatusCode::kUnavailable) << s.status();
  EXPECT_NE(s.status().message().find("/nonexistent/gpuspy"), std::string_view::npos) << s.status();
  EXPECT_NE(s.status().message().find("5999"), std::string_view::npos) << s.status();
}

TEST_F(PostgresStoreTest, MalformedConninfoIsInvalidArgumentAndPasswordsAreNotEchoed) {
  PostgresStoreOptions o;
  o.conninfo = "host=127.0.0.1 password=hunter2 = nonsense";
  auto s = OpenPostgresStore(o);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << s.status();
  o.conninfo = "postgresql://gpuspy:hunter2@127.0.0.1:1/db";
  s = OpenPostgresStore(o);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kUnavailable) << s.status();
  EXPECT_EQ(s.status().message().find("hunter2"), std::string_view::npos) << s.status();
  o.schema = "";
  EXPECT_EQ(OpenPostgresStore(o).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(PostgresStoreTest, MissingDatabaseIsNotFound) {
  PostgresStoreOptions o = Options();
  o.conninfo = server_->Conninfo("no_such_database");
  auto s = OpenPostgresStore(o);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound) << s.status();
  EXPECT_NE(s.status().message().find("no_such_database"), std::string_view::npos) << s.status();
}

TEST_F(PostgresStoreTest, ConninfoMayBeAUri) {
  PostgresStoreOptions o = Options();
  // base_conninfo is "host=<dir> port=<port> user=gpuspy".
  const std::string base = server_->base_conninfo();
  const std::string host = base.substr(5, base.find(' ') - 5);
  const std::string port = std::to_string(server_->port());
  std::string escaped;
  for (char c : host) escaped += c == '/' ? std::string("%2F") : std::string(1, c);
  o.conninfo = "postgresql://gpuspy@" + escaped + ":" + port + "/" + database_;
  auto store = Open(o);
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(store->UpsertProcess(TestIdentity("p", "j"), 1).ok());
}

TEST_F(PostgresStoreTest, PartitionsAreTablesCreatedAndDroppedWithTheirCatalogRows) {
  PostgresStoreOptions o = Options();
  o.partition_max_bytes = 2000;
  auto store = Open(o);
  auto id = *store->UpsertProcess(TestIdentity("p", "j"), 1);
  for (uint64_t seq = 1; seq <= 9; ++seq) ASSERT_TRUE(store->AppendBatch(Batch(id, seq, 900)).ok());
  const std::string partitions =
      "SELECT count(*) FROM pg_inherits WHERE inhparent = 'gpuspy.batches'::regclass";
  EXPECT_EQ(Sql(partitions), "5");  // 2 x 900 bytes per partition
  EXPECT_EQ(Sql("SELECT count(*) FROM gpuspy.batch_partitions"), "5");
  EXPECT_EQ(Sql("SELECT string_agg(relname, ',' ORDER BY segment_id) FROM gpuspy.batch_partitions"),
            "batches_s0000000001,batches_s0000000002,batches_s0000000003,batches_s0000000004,"
            "batches_s0000000005");
  EXPECT_EQ(Sql("SELECT sum(payload_bytes) FROM gpuspy.batch_partitions"), "8100");
  // Every partition keeps payloads out of line and uncompressed, as its parent says.
  EXPECT_EQ(Sql("SELECT count(*) FROM pg_attribute a JOIN pg_inherits i ON a.attrelid = i.inhrelid "
                "WHERE i.inhparent = 'gpuspy.batches'::regclass AND a.attname = 'payload' "
                "AND a.attstorage = 'e'"),
            "5");
  // Each row went to the partition of its segment.
  EXPECT_EQ(Sql("SELECT count(*) FROM gpuspy.batches_s0000000003"), "2");
  ASSERT_EQ(*store->EnforceRetention({/*max_bytes=*/1, 0}, 0), 4u);
  EXPECT_EQ(Sql(partitions), "1");
  EXPECT_EQ(Sql("SELECT segment_id FROM gpuspy.batch_partitions"), "5");
  EXPECT_EQ(Sql("SELECT count(*) FROM pg_tables WHERE tablename = 'batches_s0000000001'"), "0");
  // A reopened store continues in the newest partition (batch 9 is alone there) and rolls on.
  store.reset();
  store = Open(o);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->AppendBatch(Batch(id, 10, 900)).ok());
  EXPECT_EQ(Sql(partitions), "1");
  EXPECT_EQ(Sql("SELECT count(*) FROM gpuspy.batches_s0000000005"), "2");
  ASSERT_TRUE(store->AppendBatch(Batch(id, 11, 900)).ok());
  EXPECT_EQ(Sql(partitions), "2");
  EXPECT_EQ(Sql("SELECT count(*) FROM gpuspy.batches_s0000000006"), "1");
}

TEST_F(PostgresStoreTest, PartitionsRollWithAgeToo) {
  PostgresStoreOptions o = Options();
  // Long enough that opening the store and two appends stay within one partition on a loaded
  // machine or under ThreadSanitizer (50 ms was not).
  o.partition_max_age_ns = 1'000'000'000;  // 1 s
  auto store = Open(o);
  auto id = *store->UpsertProcess(TestIdentity("p", "j"), 1);
  ASSERT_TRUE(store->AppendBatch(Batch(id, 1)).ok());
  ASSERT_TRUE(store->AppendBatch(Batch(id, 2)).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  ASSERT_TRUE(store->AppendBatch(Batch(id, 3)).ok());
  EXPECT_EQ(store->Stats().segments, 2u);
  EXPECT_EQ(Sql("SELECT count(*) FROM gpuspy.batches_s0000000001"), "2");
}

// The collector must ride out a database restart: calls fail with Unavailable while it is down
// (the producer keeps the batches and retries), and work again once it is back, on new connections.
TEST(PostgresServerRestartTest, CallsAreUnavailableWhileTheServerIsDownAndWorkAfter) {
  std::string error;
  auto server = PostgresServer::Start({}, &error);
  if (server == nullptr) GTEST_SKIP() << "PostgreSQL not available: " << error;
  const std::string db = server->CreateDatabase(&error);
  ASSERT_FALSE(db.empty()) << error;
  PostgresStoreOptions o;
  o.conninfo = server->Conninfo(db);
  o.pool_size = 2;
  o.connect_timeout_s = 2;
  auto opened = OpenPostgresStore(o);
  ASSERT_TRUE(opened.ok()) << opened.status();
  std::unique_ptr<Store> store = std::move(*opened);
  auto id = *store->UpsertProcess(TestIdentity("p", "j"), 1);
  ASSERT_TRUE(store->AppendBatch(Batch(id, 1)).ok());

  ASSERT_TRUE(server->Stop(&error)) << error;
  absl::Status st = store->AppendBatch(Batch(id, 2));
  EXPECT_EQ(st.code(), absl::StatusCode::kUnavailable) << st;
  EXPECT_NE(st.message().find(std::to_string(server->port())), std::string_view::npos) << st;
  EXPECT_EQ(store->GetProcess(id).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(store->ReadBatches(id, 0, 0).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(store->UpsertSteps({{id, 1, 0, 1, "nvtx"}}).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(store->EnforceRetention({1, 0}, 0).status().code(), absl::StatusCode::kUnavailable);
  (void)store->Stats();  // answers what it can, never crashes
  EXPECT_GE(store->Stats().write_errors, 1u);

  ASSERT_TRUE(server->Restart(&error)) << error;
  EXPECT_TRUE(store->AppendBatch(Batch(id, 2)).ok());
  auto all = store->ReadBatches(id, 0, 0);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->size(), 2u);
  EXPECT_EQ(store->GetProcess(id)->batch_count, 2u);
  // The writer took the schema's lock again on its new connection.
  EXPECT_EQ(OpenPostgresStore(o).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(PostgresStoreTest, ConnectionsTheServerTerminatesAreReopened) {
  auto store = Open();
  auto id = *store->UpsertProcess(TestIdentity("p", "j"), 1);
  ASSERT_TRUE(store->AppendBatch(Batch(id, 1)).ok());
  ASSERT_EQ(Sql("SELECT count(pg_terminate_backend(pid)) > 0 FROM pg_stat_activity WHERE "
                "datname = current_database() AND pid <> pg_backend_pid()"),
            "t");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // Each connection notices it was closed before sending anything and reconnects.
  EXPECT_TRUE(store->AppendBatch(Batch(id, 2)).ok());
  auto all = store->ReadBatches(id, 0, 0);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->size(), 2u);
  EXPECT_TRUE(store->GetProcess(id).ok());
  EXPECT_EQ(OpenPostgresStore(Options()).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(PostgresStoreTest, StatsCountTheToastedPayloads) {
  auto store = Open();
  auto id = *store->UpsertProcess(TestIdentity("p", "j"), 1);
  const StoreStats empty = store->Stats();
  for (uint64_t seq = 1; seq <= 8; ++seq) ASSERT_TRUE(store->AppendBatch(Batch(id, seq, 256 << 10)).ok());
  const StoreStats full = store->Stats();
  EXPECT_GE(full.bytes_on_disk, empty.bytes_on_disk + 8 * (256u << 10));
  EXPECT_EQ(full.batches, 8u);
  EXPECT_EQ(full.segments, 1u);
}

}  // namespace
}  // namespace gpuspy::collector
