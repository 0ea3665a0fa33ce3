#include "viewer/cli/composition_view.h"

#include "absl/strings/str_cat.h"
#include "viewer/cli/format.h"
#include "viewer/cli/table.h"

namespace gpuspy::cli {
namespace {

std::string Share(double fraction) { return absl::StrCat(static_cast<int>(fraction * 100 + 0.5), "%"); }

}  // namespace

std::string GpuTimeLine(const KernelClasses& classes) {
  if (classes.empty()) return "";
  std::string line = "GPU time:";
  double rest = 0;
  for (int i = 0; i < classes.size(); ++i) {
    if (i >= kLineClasses) {
      rest += classes[i].share();
      continue;
    }
    absl::StrAppend(&line, i == 0 ? " " : " · ", classes[i].kernel_class(), " ",
                    Share(classes[i].share()));
  }
  // Classes that round to 0% add nothing a reader can use.
  if (Share(rest) != "0%") absl::StrAppend(&line, " · rest ", Share(rest));
  return line;
}

void PrintGpuTimeTable(const KernelClasses& classes, std::ostream& out) {
  Table t({"WHERE THE GPU TIME GOES", ">SHARE", ">TOTAL ms", ">KERNELS"});
  for (const v1::KernelClassTime& c : classes) {
    t.Add({c.kernel_class(), Share(c.share()), Ms(c.ns()), std::to_string(c.count())});
  }
  t.Print(out);
}

}  // namespace gpuspy::cli
