// main() of every Catch2 test binary. "--gpulab-gpu" marks a run of GPU tests: without a GPU it
// exits 77, which ctest reports as SKIPPED (never as passed); with GPULAB_REQUIRE_GPU=1 (the gpu
// preset) a missing GPU is a failure instead.
//
// ctest runs each binary twice, "[cpu]" and "[gpu]" (common/cmake/GpulabLab.cmake), so two things
// would let a test never run while every ctest line says passed:
//   * a filter that matches no test: Debian's Catch2 v2 reports "No test cases matched" and exits
//     0 (v3 exits 2 only when nothing at all ran). Both are told to fail on it (--warn).
//   * a test case tagged neither [cpu] nor [gpu] (a typo, "[gpu ]", a forgotten tag): no ctest
//     filter ever selects it. Every test case must carry exactly one of the two, checked before
//     anything runs, whatever the command line asks for.
#ifdef GPULAB_CATCH2_V3
#include <catch2/catch_session.hpp>
#include <catch2/catch_test_case_info.hpp>
#include <catch2/internal/catch_test_case_registry_impl.hpp>
#else
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#endif

#include <algorithm>
#include <cctype>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "gpulab/device_info.hpp"

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The test cases whose tags hold neither or both of cpu and gpu, as "name [tags]".
std::vector<std::string> mistagged(Catch::Session& session) {
  std::vector<std::string> bad;
  for (const auto& test : Catch::getAllTestCasesSorted(session.config())) {
#ifdef GPULAB_CATCH2_V3
    const Catch::TestCaseInfo& info = test.getTestCaseInfo();
    std::vector<std::string> tags;
    for (const auto& tag : info.tags) tags.push_back(static_cast<std::string>(tag.original));
    const std::string shown = info.tagsAsString();
#else
    const Catch::TestCaseInfo& info = test;
    const std::vector<std::string>& tags = info.tags;
    const std::string shown = info.tagsAsString();
#endif
    int cpu = 0, gpu = 0;
    for (const auto& tag : tags) {
      cpu += lower(tag) == "cpu";
      gpu += lower(tag) == "gpu";
    }
    if (cpu + gpu != 1) bad.push_back("\"" + info.name + "\" " + shown);
  }
  return bad;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args;
  bool gpu_tests = false;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--gpulab-gpu") == 0) gpu_tests = true;
    else args.push_back(argv[i]);
  }
  // A filter that matches nothing is a failure (v2: exit 2; v3: exit 3), not "No tests ran", 0.
  static char warn[] = "--warn";
#ifdef GPULAB_CATCH2_V3
  static char unmatched[] = "UnmatchedTestSpec";
#else
  static char unmatched[] = "NoTests";
#endif
  args.insert(args.begin() + 1, {warn, unmatched});

  Catch::Session session;
  if (const int rc = session.applyCommandLine(static_cast<int>(args.size()), args.data()); rc != 0) return rc;
  if (const auto bad = mistagged(session); !bad.empty()) {
    std::cerr << "gpulab: every test case must be tagged exactly one of [cpu] and [gpu] (ctest runs only those "
                 "two filters); these are not:\n";
    for (const auto& b : bad) std::cerr << "  " << b << "\n";
    return 1;
  }
  if (gpu_tests && !gpulab::gpu_available()) return gpulab::missing_gpu_exit_code(std::cout);
  return session.run();
}
