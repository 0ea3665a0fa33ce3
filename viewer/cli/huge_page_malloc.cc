#include "viewer/cli/huge_page_malloc.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

namespace gpuspy::cli {
namespace {

// The global options that take a value as the next argument (gpuspy_program.cc).
bool TakesValue(const std::string& option) {
  return option == "--collector" || option == "--token-file" || option == "--tls-ca" ||
         option == "--timeout";
}

// The bracketed word of /sys/kernel/mm/transparent_hugepage/enabled ("always [madvise] never").
std::string ThpMode() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const size_t open = text.find('['), close = text.find(']');
  if (open == std::string::npos || close == std::string::npos || close < open) return "";
  return text.substr(open + 1, close - open - 1);
}

// The bytes on disk of the arguments that name regular files (the traces; an option's value that
// happens to be a file only adds to it).
uint64_t FileBytes(const std::vector<std::string>& args) {
  uint64_t total = 0;
  for (size_t i = 1; i < args.size(); ++i) {
    struct stat st {};
    if (stat(args[i].c_str(), &st) == 0 && S_ISREG(st.st_mode)) total += static_cast<uint64_t>(st.st_size);
  }
  return total;
}

}  // namespace

std::string SubcommandOf(const std::vector<std::string>& args) {
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") return "";
    if (a.rfind('-', 0) == 0) {
      if (TakesValue(a)) ++i;  // "--collector ADDR"; "--collector=ADDR" is one argument
      continue;
    }
    return a;
  }
  return "";
}

bool WantsHugePageMalloc(const std::vector<std::string>& args, uint64_t input_bytes,
                         const std::string& thp_mode, const char* glibc_tunables, const char* opt_out) {
  if (thp_mode != "madvise" || glibc_tunables != nullptr || opt_out != nullptr) return false;
  if (input_bytes < kMinHugePageInputBytes) return false;
  const std::string command = SubcommandOf(args);
  return command == "analyze" || command == "diff" || command == "import";
}

void ReexecWithHugePageMallocIfUseful(int argc, char** argv) {
  const std::vector<std::string> args(argv, argv + argc);
  if (!WantsHugePageMalloc(args, FileBytes(args), ThpMode(), std::getenv("GLIBC_TUNABLES"),
                           std::getenv("GPUSPY_NO_HUGE_PAGES"))) {
    return;
  }
  if (setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", /*overwrite=*/0) != 0) return;
  execv("/proc/self/exe", argv);
  unsetenv("GLIBC_TUNABLES");  // not executed (no /proc?): run as we are
}

}  // namespace gpuspy::cli
