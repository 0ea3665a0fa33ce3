// Issue 34, items 1-2, with the real binaries: a trace of identical microsecond kernels and no
// step markers is analysed (offline, and by gpuspyd after an import) in bounded time and memory
// as a few time windows, not one step per kernel; a huge kernel name is cut to gpuspyd's limit
// (and imports), a value too long to parse in bounded memory is refused with one clear line,
// and a gzip bomb over --max-trace-bytes is refused in bounded memory.
#include <sys/resource.h>

#include <zlib.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/support/gpuspyd.h"
#include "tests/support/subprocess.h"

namespace gpuspy {
namespace {

using namespace std::chrono_literals;

// The probe's generator: N identical 1 µs kernels, no ProfilerStep.
std::string SteplessTrace(const std::string& dir, int kernels) {
  const std::string path = dir + "/stepless_" + std::to_string(kernels) + ".json.gz";
  testing::RunResult r = testing::Run({"python3", std::string(SOURCE_DIR) + "/tests/support/stepless_trace.py",
                                       path, std::to_string(kernels)});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return path;
}

// `kernels` kernels named by `name_bytes` 'k's, written a MiB at a time (plain JSON: the measured
// command reads it; a generator holding the name in memory would be the largest child).
std::string HugeNameTrace(const std::string& dir, int kernels, size_t name_bytes) {
  const std::string path = dir + "/name_" + std::to_string(name_bytes) + ".json";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  const std::string ks(1 << 20, 'k');
  std::fputs("{\"traceEvents\": [", f);
  for (int i = 0; i < kernels; ++i) {
    std::fputs(i == 0 ? "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \""
                      : ", {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"", f);
    for (size_t left = name_bytes; left > 0;) {
      const size_t n = std::min(left, ks.size());
      std::fwrite(ks.data(), 1, n, f);
      left -= n;
    }
    std::fprintf(f, "\", \"pid\": 0, \"tid\": 7, \"ts\": %d, \"dur\": 1, "
                    "\"args\": {\"device\": 0, \"stream\": 7, \"correlation\": %d}}", 10 * i, i + 1);
  }
  std::fputs("]}\n", f);
  std::fclose(f);
  return path;
}

// The largest resident set of any child reaped so far, in MB: the check runs the measured
// command last, after children smaller than its bound.
double PeakChildRssMb() {
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

size_t Reports(const std::string& json_out) {
  const nlohmann::json j = nlohmann::json::parse(json_out);
  const nlohmann::json& reports = j.contains("reports") && j["reports"].is_object()
                                      ? j["reports"].value("reports", nlohmann::json::array())
                                      : j.value("reports", nlohmann::json::array());
  return reports.size();
}

TEST(SteplessTrace, IdenticalKernelsAreAnalysedAsAFewWindowsInBoundedTimeAndMemory) {
  testing::TempDir dir;
  // 60k kernels: before issue 34's fix, 60k one-kernel steps, 12.9 s and 364 MB.
  const std::string trace = SteplessTrace(dir.path(), 60'000);
  const auto start = std::chrono::steady_clock::now();
  testing::RunResult r =
      testing::Run({GPUSPY_BIN, "--json", "analyze", "--job", "j", trace}, {}, 60s);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // 60k kernels 2 µs apart: 0.12 s of activity, one 1 s window.
  EXPECT_LE(Reports(r.out), 2u);
  EXPECT_NE(r.out.find("window:1000ms"), std::string::npos);
  EXPECT_LT(seconds, 10.0) << "a shared 2-core VM measured ~0.4 s";
  EXPECT_LT(PeakChildRssMb(), 150.0);
}

TEST(SteplessTrace, GpuspydReportsAnImportedSteplessTraceAtOnce) {
  testing::TempDir dir;
  const std::string trace = SteplessTrace(dir.path(), 60'000);
  testing::Gpuspyd daemon({.binary = GPUSPYD_BIN, .dir = dir.path()});
  ASSERT_TRUE(daemon.Start()) << daemon.log();
  const std::string address = daemon.address();
  testing::RunResult imported =
      testing::Run({GPUSPY_BIN, "--collector", address, "import", "--job", "j", trace});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  testing::RunResult report = testing::Run(
      {GPUSPY_BIN, "--collector", address, "--timeout", "30", "--json", "report", "--job", "j", "--all"},
      {}, 60s);
  ASSERT_EQ(report.exit_code, 0) << report.err << daemon.log();
  EXPECT_LE(Reports(report.out), 2u);
}

TEST(HugeStrings, AKernelNameOverGpuspydsLimitIsCutCountedAndImports) {
  testing::TempDir dir;
  const std::string trace = HugeNameTrace(dir.path(), 10, 1 << 20);
  testing::RunResult offline = testing::Run({GPUSPY_BIN, "analyze", "--job", "j", trace});
  ASSERT_EQ(offline.exit_code, 0) << offline.err;
  EXPECT_NE(offline.err.find("10 events' names longer than 64 KiB cut"), std::string::npos) << offline.err;

  // gpuspyd refuses dictionary strings over 64 KiB: uncut, the import failed.
  testing::Gpuspyd daemon({.binary = GPUSPYD_BIN, .dir = dir.path()});
  ASSERT_TRUE(daemon.Start()) << daemon.log();
  testing::RunResult imported = testing::Run(
      {GPUSPY_BIN, "--collector", daemon.address(), "import", "--job", "j", trace});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  // Said with the per-file summary on stdout.
  EXPECT_NE(imported.out.find("events' names longer than 64 KiB cut"), std::string::npos) << imported.out;
}

TEST(HugeStrings, AValueTooLongToParseInBoundedMemoryIsRefusedInOneLine) {
  testing::TempDir dir;
  const std::string trace = HugeNameTrace(dir.path(), 2, 64 << 20);
  testing::RunResult r = testing::Run({GPUSPY_BIN, "analyze", "--job", "j", trace});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(trace + ": one value (a string?) runs over 8 MiB"), std::string::npos) << r.err;
  // Not even the file's text is read whole (before: 3.2 s, 527 MB, ~8x the name, exit 0).
  EXPECT_LT(PeakChildRssMb(), 100.0);
}

// What a bomb's text is made of. Zeros are refused from their first byte; a '{' and then
// whitespace looks like the start of a trace, so only its size can refuse it.
enum class BombText { kZeros, kBraceThenSpaces };

// `mib` MiB of `text`, gzip'd, in `dir`; `members` > 1 makes it that many gzip members (gzip -c
// a b > c), the last one holding a single MiB.
std::string GzipBombFile(const std::string& dir, int mib, int members = 1,
                         BombText text = BombText::kBraceThenSpaces) {
  const std::string bomb = dir + "/bomb" + std::to_string(mib) + ".json.gz";
  const std::string filler(1 << 20, text == BombText::kZeros ? '\0' : ' ');
  std::string first = filler;
  if (text == BombText::kBraceThenSpaces) first[0] = '{';
  for (int m = 0; m < members; ++m) {
    const int member_mib = m + 1 < members ? (mib - 1) / (members - 1) : (members == 1 ? mib : 1);
    gzFile f = gzopen(bomb.c_str(), m == 0 ? "wb9" : "ab9");
    for (int i = 0; i < member_mib; ++i) {
      const std::string& mib_text = m == 0 && i == 0 ? first : filler;
      gzwrite(f, mib_text.data(), static_cast<unsigned>(mib_text.size()));
    }
    gzclose(f);
  }
  return bomb;
}

// Over the limit, a bomb is refused before its text is inflated: the limit's worth of zeros is
// never held. Before, refusing cost the limit (2 GiB default: 2,070 MB RSS for 10 GiB of zeros;
// here 256 MiB: ~270 MB).
TEST(GzipBomb, OverTheLimitIsRefusedInBoundedMemory) {
  testing::TempDir dir;
  const std::string bomb = GzipBombFile(dir.path(), 512);
  testing::RunResult r =
      testing::Run({GPUSPY_BIN, "analyze", "--max-trace-bytes", "268435456", "--job", "j", bomb});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("inflates to more than 268435456 bytes"), std::string::npos) << r.err;
  EXPECT_LT(PeakChildRssMb(), 40.0) << "512 MiB of zeros refused at 256 MiB";
}

// `gpuspy import` reads its files through the same bounded inflate before it sends anything.
TEST(GzipBomb, ImportOverTheLimitIsRefusedBeforeSendingInBoundedMemory) {
  testing::TempDir dir;
  const std::string bomb = GzipBombFile(dir.path(), 512);
  // No collector listens there: the file is refused before one is needed.
  testing::RunResult r = testing::Run({GPUSPY_BIN, "--collector", "127.0.0.1:1", "import",
                                       "--max-trace-bytes", "268435456", "--job", "j", bomb});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("inflates to more than 268435456 bytes"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nothing imported"), std::string::npos) << r.err;
  EXPECT_LT(PeakChildRssMb(), 40.0) << "512 MiB of zeros refused at 256 MiB";
}

// The trailer names the last member's size only (here 1 MiB): a bomb in several members is
// counted whole, and refused as cheaply.
TEST(GzipBomb, ABombOfSeveralMembersIsCountedWhole) {
  testing::TempDir dir;
  const std::string bomb = GzipBombFile(dir.path(), 385, 3);
  testing::RunResult r =
      testing::Run({GPUSPY_BIN, "analyze", "--max-trace-bytes", "268435456", "--job", "j", bomb});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("inflates to more than 268435456 bytes"), std::string::npos) << r.err;
  EXPECT_LT(PeakChildRssMb(), 40.0) << "3 members, 385 MiB of zeros, refused at 256 MiB";
}

// Under the limit, text that starts like a trace is inflated whole (then refused by the parser):
// memory is the text's size and little more, not a multiple of it.
TEST(GzipBomb, UnderTheLimitCostsTheTextOnce) {
  testing::TempDir dir;
  const std::string bomb = GzipBombFile(dir.path(), 64);
  testing::RunResult r =
      testing::Run({GPUSPY_BIN, "analyze", "--max-trace-bytes", "134217728", "--job", "j", bomb});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(bomb + ": "), std::string::npos) << r.err;
  EXPECT_LT(PeakChildRssMb(), 64.0 + 48.0) << "64 MiB of text";
}

// Text that cannot be a trace is refused from its first bytes, under the limit too: before, 1 GiB
// of gzip'd zeros was inflated into 1 GiB of memory (1,042 MB peak) to be refused for its first
// byte.
TEST(GzipBomb, ZerosAreRefusedFromTheirHeadWithoutInflatingThem) {
  testing::TempDir dir;
  const std::string bomb = GzipBombFile(dir.path(), 512, 1, BombText::kZeros);
  testing::RunResult r = testing::Run({GPUSPY_BIN, "analyze", "--job", "j", bomb});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(bomb + ": not JSON (starts with byte 0x00"), std::string::npos) << r.err;
  EXPECT_LT(PeakChildRssMb(), 40.0) << "512 MiB of zeros, under the 2 GiB default";
}

}  // namespace
}  // namespace gpuspy
