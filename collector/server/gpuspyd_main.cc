// gpuspyd: the program is RunGpuspyd (gpuspyd_program.h).
#include "collector/server/gpuspyd_program.h"

int main(int argc, char** argv) { return gpuspy::collector::RunGpuspyd(argc, argv, GPUSPY_VERSION); }
