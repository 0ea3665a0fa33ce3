# Precompiled headers: the standard library, abseil and the generated gpuspy.v1 messages are
# parsed once per build tree instead of once per file (GoogleTest too, for the tests). Half of a
# typical file's compile time was those headers; CI builds three trees, so this is minutes
# (bench/results/ci-2026-11-27.md).
#
# Two owners, because a precompiled header is only valid for files compiled with the same
# code-generation flags: gpuspy_pch for static libraries (-fPIC) and gpuspy_test_pch for test
# executables (-fPIE, GoogleTest's macros). gpuspy_precompile_all() (the end of the top-level
# CMakeLists.txt) gives each eligible target the matching one with REUSE_FROM. Not eligible, and
# compiled as before: shared libraries and hidden-visibility code (the injected core: clang
# refuses a PCH built with other visibility), executables that are not tests, C-only targets,
# and sources with their own code-generation flags (SKIP_PRECOMPILE_HEADERS, e.g. the AVX2 Kineto
# reader).
#
# GCC refuses a PCH built without -pthread in a file compiled with it (and the reverse), so both
# owners and every consumer are compiled with -pthread. ccache caches files that use a PCH only with
# CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
# (scripts/build.sh), and clang's PCH must carry no timestamp (-fno-pch-timestamp).
option(GPUSPY_PCH "Precompile the common headers (standard library, abseil, gpuspy.v1, GoogleTest)" ON)

set(GPUSPY_PCH_HEADERS
  <algorithm> <atomic> <chrono> <cstdint> <cstring> <filesystem> <functional> <map> <memory>
  <mutex> <optional> <set> <string> <string_view> <thread> <utility> <vector>
  <absl/container/flat_hash_map.h> <absl/status/status.h> <absl/status/statusor.h>
  <absl/strings/str_cat.h> <absl/time/time.h>
  <gpuspy/v1/events.pb.h> <gpuspy/v1/report.pb.h> <gpuspy/v1/wire.pb.h> <gpuspy/v1/diff.pb.h>
  <gpuspy/v1/services.pb.h>)

function(gpuspy_pch_owner name type)
  set(anchor ${CMAKE_BINARY_DIR}/pch/${name}.cc)
  set(main "")
  if(type STREQUAL "EXECUTABLE")
    set(main "int main() { return 0; }")
  endif()
  # CONFIGURE writes only when the text changes: a rewrite would rebuild every consumer.
  file(CONFIGURE OUTPUT ${anchor} CONTENT "// Owns ${name}'s precompiled header.\n${main}\n")
  if(type STREQUAL "EXECUTABLE")
    add_executable(${name} EXCLUDE_FROM_ALL ${anchor})
  else()
    add_library(${name} STATIC EXCLUDE_FROM_ALL ${anchor})
  endif()
  target_link_libraries(${name} PRIVATE gpuspy_proto_messages absl::status absl::statusor
    absl::strings absl::time absl::flat_hash_map Threads::Threads ${ARGN})
  target_compile_options(${name} PRIVATE -pthread)
  target_precompile_headers(${name} PRIVATE ${GPUSPY_PCH_HEADERS})
  target_compile_options(${name} PRIVATE $<$<CXX_COMPILER_ID:Clang>:-Xclang -fno-pch-timestamp>)
  gpuspy_strict(${name})
endfunction()

# A static library gets its own precompiled header, the common set plus `headers`, instead of
# reusing gpuspy_pch's: where its files share heavy headers beyond the common set (the CLI's 40
# files each parsed CLI11, gRPC and nlohmann::json, 28 % of a cold product build; 3.5 s of the
# 13 s of one of them), or where its flags differ from gpuspy_pch's (the injected core's hidden
# visibility), so it could not reuse that one.
function(gpuspy_pch_own target)
  set_property(TARGET ${target} PROPERTY GPUSPY_PCH_OWN ON)
  set_property(TARGET ${target} PROPERTY GPUSPY_PCH_EXTRA ${ARGN})
endfunction()

# Every target defined in `dir` and below.
function(gpuspy_targets_under dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    gpuspy_targets_under(${sub} more)
    list(APPEND targets ${more})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

function(gpuspy_precompile_all)
  if(NOT GPUSPY_PCH)
    return()
  endif()
  gpuspy_pch_owner(gpuspy_pch STATIC_LIBRARY)
  if(TARGET GTest::gmock)
    gpuspy_pch_owner(gpuspy_test_pch EXECUTABLE GTest::gtest GTest::gmock)
    target_precompile_headers(gpuspy_test_pch PRIVATE <gmock/gmock.h> <gtest/gtest.h>)
  endif()
  gpuspy_targets_under(${PROJECT_SOURCE_DIR} targets)
  foreach(t ${targets})
    # The owners, and the generated code the owners' headers come from.
    if(t MATCHES "^gpuspy_(test_)?pch$" OR t MATCHES "^gpuspy_proto")
      continue()
    endif()
    get_target_property(type ${t} TYPE)
    get_target_property(visibility ${t} CXX_VISIBILITY_PRESET)
    get_target_property(sources ${t} SOURCES)
    get_target_property(libs ${t} LINK_LIBRARIES)
    get_target_property(own ${t} GPUSPY_PCH_OWN)
    if(NOT sources OR (visibility STREQUAL "hidden" AND NOT own))
      continue()
    endif()
    list(FILTER sources INCLUDE REGEX "\\.cc$")
    if(NOT sources)
      continue()
    endif()
    if(type STREQUAL "STATIC_LIBRARY")
      set(owner gpuspy_pch)
    elseif(type STREQUAL "EXECUTABLE" AND TARGET gpuspy_test_pch AND
           ("GTest::gtest_main" IN_LIST libs OR "GTest::gtest" IN_LIST libs))
      set(owner gpuspy_test_pch)
    else()
      continue()
    endif()
    target_compile_options(${t} PRIVATE -pthread)
    if(own AND owner STREQUAL "gpuspy_pch")
      get_target_property(extra ${t} GPUSPY_PCH_EXTRA)
      if(NOT extra)
        set(extra "")
      endif()
      target_precompile_headers(${t} PRIVATE ${GPUSPY_PCH_HEADERS} ${extra})
      target_compile_options(${t} PRIVATE $<$<CXX_COMPILER_ID:Clang>:-Xclang -fno-pch-timestamp>)
    else()
      target_precompile_headers(${t} REUSE_FROM ${owner})
    endif()
  endforeach()
endfunction()
