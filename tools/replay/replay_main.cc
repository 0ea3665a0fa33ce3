// gpuspy-replay: the program is RunReplay (replay_program.h).
#include "tools/replay/replay_program.h"

int main(int argc, char** argv) { return gpuspy::replay::RunReplay(argc, argv); }
