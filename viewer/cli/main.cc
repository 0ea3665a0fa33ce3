// gpuspy: the program is RunGpuspy (gpuspy_program.h).
#include "viewer/cli/gpuspy_program.h"

int main(int argc, char** argv) { return gpuspy::cli::RunGpuspy(argc, argv, GPUSPY_VERSION); }
