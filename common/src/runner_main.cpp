// main() of every gpulab-<lab>-<impl> runner: the lab comes from the linked lab.cu.
#include "gpulab/runner.hpp"

int main(int argc, char** argv) { return gpulab::runner_main(argc, argv); }
