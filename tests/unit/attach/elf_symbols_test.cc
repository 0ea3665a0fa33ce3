#include "client/attach/elf_symbols.h"

#include <dlfcn.h>
#include <elf.h>
#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

#include "client/attach/proc_maps.h"
#include "tests/support/subprocess.h"

namespace gpuspy::attach {
namespace {

LoadedObject OwnLibc() {
  std::optional<LoadedObject> libc = FindObject(*ReadMaps(getpid()), "libc.so.6");
  EXPECT_TRUE(libc.has_value());
  return libc.value_or(LoadedObject{});
}

// What the attacher computes for another process must be what the loader resolved here.
TEST(ElfSymbolsTest, LibcsDlopenAndDlsymAreWhereTheLoaderPutThem) {
  const LoadedObject libc = OwnLibc();
  absl::StatusOr<ElfInfo> info = ReadElfInfo(libc.path);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->machine, EM_X86_64);
  // libc's own definitions: under ThreadSanitizer, RTLD_DEFAULT would find its dlopen interceptor.
  void* own = dlopen(libc.path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(own, nullptr);
  for (const char* name : {"dlopen", "dlsym", "dlclose", "getpid"}) {
    absl::StatusOr<uint64_t> value = DynamicSymbolValue(libc.path, name);
    ASSERT_TRUE(value.ok()) << name << ": " << value.status();
    EXPECT_EQ(libc.base - info->first_load_vaddr + *value, reinterpret_cast<uint64_t>(dlsym(own, name)))
        << name;
  }
  dlclose(own);
}

TEST(ElfSymbolsTest, AnAbsentFunctionIsNotFound) {
  EXPECT_EQ(DynamicSymbolValue(OwnLibc().path, "gpuspy_no_such_function").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(ElfSymbolsTest, AnIfuncIsRefusedNotCalledAsTheFunction) {
  // glibc's strlen is an IFUNC: its symbol value is the resolver.
  EXPECT_EQ(DynamicSymbolValue(OwnLibc().path, "strlen").status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(ElfSymbolsTest, NotAnElfAndTruncatedFilesGiveErrorsNotCrashes) {
  testing::TempDir dir;
  const std::string text = dir.path() + "/text";
  std::ofstream(text) << "hello, not an object\n";
  EXPECT_EQ(DynamicSymbolValue(text, "dlopen").status().code(), absl::StatusCode::kInvalidArgument);
  // The first 4 KiB of libc: a valid header whose tables point past the end.
  const std::string cut = dir.path() + "/cut.so";
  {
    std::ifstream in(OwnLibc().path, std::ios::binary);
    std::string head(4096, '\0');
    in.read(head.data(), head.size());
    std::ofstream(cut, std::ios::binary) << head;
  }
  EXPECT_FALSE(DynamicSymbolValue(cut, "dlopen").ok());
  EXPECT_EQ(DynamicSymbolValue(dir.path() + "/missing.so", "dlopen").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace gpuspy::attach
