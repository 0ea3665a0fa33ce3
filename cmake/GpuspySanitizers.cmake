# Sanitizers are applied to every target of the build tree (including generated code) because
# mixing instrumented and uninstrumented C++ in one process gives false reports.
if(GPUSPY_SANITIZE AND GPUSPY_TSAN)
  message(FATAL_ERROR "GPUSPY_SANITIZE and GPUSPY_TSAN are mutually exclusive")
endif()
if(GPUSPY_SANITIZE)
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
  # The drivers add -fsanitize=fuzzer at link time (tests/fuzz/CMakeLists.txt).
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "GPUSPY_FUZZ needs clang (libFuzzer)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
    -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
