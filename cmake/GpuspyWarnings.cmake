# Strict warnings on gpuspy's own targets only (generated protobuf code is compiled without them).
function(gpuspy_strict target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror -Wno-unused-parameter)
endfunction()
