# Unity builds: a library's sources compiled a batch at a time (one translation unit that
# #includes several .cc files) instead of one by one. The headers they share beyond the
# precompiled ones (cmake/GpuspyPch.cmake), and the inline and template code those headers bring
# (protobuf accessors, abseil, CLI11, gRPC, fmt), are then parsed, instantiated and optimised once
# per batch rather than once per file: a cold product build took half the CPU time it took file
# by file (bench/results/first-run-2026-11-28.md, "Unity builds").
#
# The price: every file of a batch sees the file-local names (anonymous namespaces, statics,
# macros) of the files before it. The sources keep those names distinct (one shared helper where
# two files had the same one, a name that says what it is where they meant different things); a
# build with GPUSPY_UNITY=OFF compiles each file alone, as an editor or clang-tidy sees it.
# Files with source-level compile options (the AVX2 Kineto reader) stay out of the batches: CMake
# leaves them out by itself.
option(GPUSPY_UNITY "Compile the larger libraries in unity batches (faster cold builds)" ON)

# `batch_size` files at most per batch. Larger batches save more compile time but rebuild more
# after an edit and leave fewer jobs to run in parallel: on the 2-core machines (CI, a fresh
# install) a library should still have several batches.
function(gpuspy_unity target batch_size)
  if(NOT GPUSPY_UNITY)
    return()
  endif()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE BATCH
    UNITY_BUILD_BATCH_SIZE ${batch_size})
endfunction()
