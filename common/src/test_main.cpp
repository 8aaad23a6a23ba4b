// main() of every Catch2 test binary. "--gpulab-gpu" marks a run of GPU tests: without a GPU it
// exits 77, which ctest reports as SKIPPED (never as passed); with GPULAB_REQUIRE_GPU=1 (the gpu
// preset) a missing GPU is a failure instead.
#ifdef GPULAB_CATCH2_V3
#include <catch2/catch_session.hpp>
#else
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#endif

#include <cstring>
#include <iostream>
#include <vector>

#include "gpulab/device_info.hpp"

int main(int argc, char** argv) {
  std::vector<char*> args;
  bool gpu_tests = false;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--gpulab-gpu") == 0) gpu_tests = true;
    else args.push_back(argv[i]);
  }
  if (gpu_tests && !gpulab::gpu_available()) return gpulab::missing_gpu_exit_code(std::cout);
  return Catch::Session().run(static_cast<int>(args.size()), args.data());
}
