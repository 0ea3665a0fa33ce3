# Strict warnings on gpuspy's own targets only (generated protobuf code is compiled without them).
# -Wno-restrict: GCC 12 reports false positives for std::string concatenation at -O3
# (GCC bug 105329); the warning is useless to us until the compiler is fixed.
function(gpuspy_strict target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror -Wno-unused-parameter
    $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict>)
endfunction()
