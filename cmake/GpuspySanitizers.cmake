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
