# Sanitizers are applied to every target of the build tree (including generated code) because
# mixing instrumented and uninstrumented C++ in one process gives false reports.
#
# Sanitizer trees are compiled at -O1 (after the build type's -O3, so it wins): GCC's ASan+UBSan
# at -O3 took 3.2x the time of a Release compile (18.8 s against 5.9 s for a typical test file),
# -O1 is what the sanitizers' own documentation recommends for usable reports, and these trees
# exist to run tests, not to be fast (bench/results/ci-2026-11-27.md).
if(GPUSPY_SANITIZE AND GPUSPY_TSAN)
  message(FATAL_ERROR "GPUSPY_SANITIZE and GPUSPY_TSAN are mutually exclusive")
endif()
if(GPUSPY_FUZZ AND GPUSPY_TSAN)
  message(FATAL_ERROR "GPUSPY_FUZZ (ASan+UBSan) and GPUSPY_TSAN are mutually exclusive")
endif()
if(GPUSPY_SANITIZE OR GPUSPY_TSAN OR GPUSPY_FUZZ)
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
