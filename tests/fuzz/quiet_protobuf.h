// libprotobuf logs every string field with invalid UTF-8 it refuses to parse: under a fuzzer that
// is most inputs, and the log drowns libFuzzer's own output (gigabytes in a long run).
#pragma once

#include <google/protobuf/stubs/logging.h>

#include <cstdio>
#include <string>

namespace gpuspy::fuzz {

inline void QuietProtobuf() {
  // A FATAL message still shows: libprotobuf aborts right after it.
  google::protobuf::SetLogHandler([](google::protobuf::LogLevel level, const char* file, int line,
                                     const std::string& message) {
    if (level == google::protobuf::LOGLEVEL_FATAL) {
      std::fprintf(stderr, "libprotobuf FATAL %s:%d: %s\n", file, line, message.c_str());
    }
  });
}

}  // namespace gpuspy::fuzz
