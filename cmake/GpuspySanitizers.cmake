# Sanitizers are applied to every target of the build tree (including generated code) because
# mixing instrumented and uninstrumented C++ in one process gives false reports.
#
# The ASan/UBSan tree is compiled at -O1 (after the build type's -O3, so it wins): GCC's
# ASan+UBSan at -O3 took 3.2x the time of a Release compile (18.8 s against 5.9 s for a typical
# test file; clang at -O1: 6.4 s), -O1 is what the sanitizers' documentation recommends for
# usable reports, and the tree exists to run tests (bench/results/ci-2026-11-27.md).
#
# The TSan tree stays at the build type's -O3. At -O1 GCC emits std::string's members out of line
# in our (instrumented) executables (C++20 has no extern template for them), the dynamic linker
# binds gRPC's own calls to those copies, and TSan then reports gRPC's internally synchronised
# string copies as races in our code (7 processes, IngestClient and the hub e2e tests): noise
# that no suppression could silence without hiding real races in our strings.
if(GPUSPY_SANITIZE AND GPUSPY_TSAN)
  message(FATAL_ERROR "GPUSPY_SANITIZE and GPUSPY_TSAN are mutually exclusive")
endif()
if(GPUSPY_FUZZ AND GPUSPY_TSAN)
  message(FATAL_ERROR "GPUSPY_FUZZ (ASan+UBSan) and GPUSPY_TSAN are mutually exclusive")
endif()
if(GPUSPY_SANITIZE OR GPUSPY_FUZZ)
  add_compile_options(-O1)
endif()
if(GPUSPY_SANITIZE AND NOT GPUSPY_FUZZ)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
if(GPUSPY_TSAN)
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()
if(GPUSPY_FUZZ)
  # Every target, not only the fuzz drivers: libFuzzer needs the coverage of the code under test
  # (our libraries) to make progress, and ASan/UBSan must see that code to catch its bugs.
  # The drivers add -fsanitize=fuzzer at link time (tests/fuzz/CMakeLists.txt). The same tree
  # builds and runs the unit tests under ASan+UBSan (VARIANT=asan in scripts/build.sh): the
  # coverage hooks are no-ops from the sanitizer runtime there, and CI compiles one tree, not two.
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "GPUSPY_FUZZ needs clang (libFuzzer)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
    -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
