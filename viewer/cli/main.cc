// gpuspy: the program is RunGpuspy (gpuspy_program.h); the offline commands first give
// themselves malloc's huge pages (huge_page_malloc.h).
#include "viewer/cli/gpuspy_program.h"
#include "viewer/cli/huge_page_malloc.h"

int main(int argc, char** argv) {
  gpuspy::cli::ReexecWithHugePageMallocIfUseful(argc, argv);
  return gpuspy::cli::RunGpuspy(argc, argv, GPUSPY_VERSION);
}
