#include "viewer/cli/process_id_option.h"

#include <sys/types.h>

#include <charconv>
#include <limits>
#include <string>
#include <system_error>

namespace gpuspy::cli {

const CLI::Validator& ProcessIdValidator() {
  static const CLI::Validator validator(
      [](std::string& value) -> std::string {
        long pid = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), pid);
        if (ec == std::errc() && end == value.data() + value.size() && pid > 0 &&
            pid <= std::numeric_limits<pid_t>::max()) {
          return "";
        }
        return "'" + value + "' is not a process id (a positive integer)";
      },
      "PID");
  return validator;
}

}  // namespace gpuspy::cli
