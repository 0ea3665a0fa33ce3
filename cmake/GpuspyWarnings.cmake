# Strict warnings on gpuspy's own targets only (generated protobuf code is compiled without them).
# -Wno-restrict, -Wno-array-bounds, -Wno-stringop-overflow/-overread, GCC only: GCC 12 reports false
# positives for std::string construction and concatenation inlined at -O3 (GCC bugs 105329,
# 105651): `header.push_back(">WAIT MIN/MEDIAN/MAX")` "forms offset [32, 36] out of the bounds
# [0, 32]". Which files trip them depends on inlining decisions that move with the include order
# (they appeared with the precompiled headers). Clang, which builds the ASan tree, keeps them.
function(gpuspy_strict target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror -Wno-unused-parameter
    $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict -Wno-array-bounds -Wno-stringop-overflow
    -Wno-stringop-overread>)
endfunction()
