#include <cstdint>
#include <vector>

#include "gpulab/check.hpp"
#include "gpulab/testing.hpp"

using gpulab::compare_exact;

TEST_CASE("compare_exact passes equal arrays", "[cpu][check]") {
  std::vector<int> a{1, 2, 3};
  CHECK(compare_exact<int>(a, a).ok);
  std::vector<int> empty;
  CHECK(compare_exact<int>(empty, empty).ok);
}

TEST_CASE("compare_exact reports the first mismatch, the count and a window", "[cpu][check]") {
  std::vector<int> expected(100), actual(100);
  for (int i = 0; i < 100; ++i) expected[i] = actual[i] = i;
  actual[40] = -1;
  actual[70] = -2;
  const auto r = compare_exact<int>(expected, actual);
  REQUIRE_FALSE(r.ok);
  CHECK(r.first_mismatch == 40);
  CHECK(r.mismatch_count == 2);
  CHECK(r.message.find("first at index 40: expected 40, got -1") != std::string::npos);
  CHECK(r.detail.find(">>") != std::string::npos);
  CHECK(r.detail.find("36") != std::string::npos);  // the window starts 4 before
}

TEST_CASE("compare_exact refuses a size mismatch", "[cpu][check]") {
  std::vector<int> a{1, 2, 3}, b{1, 2};
  const auto r = compare_exact<int>(a, b);
  CHECK_FALSE(r.ok);
  CHECK(r.message.find("size mismatch") != std::string::npos);
}

TEST_CASE("compare_near: tolerance, and NaN never passes", "[cpu][check]") {
  std::vector<float> e{1.0f, 2.0f}, a{1.0001f, 2.0f};
  CHECK(gpulab::compare_near(e, a, 1e-3, 0).ok);
  CHECK_FALSE(gpulab::compare_near(e, a, 1e-6, 0).ok);
  std::vector<float> nan{std::numeric_limits<float>::quiet_NaN(), 2.0f};
  CHECK_FALSE(gpulab::compare_near(e, nan, 1, 1).ok);
}

TEST_CASE("check_sorted finds the first descent", "[cpu][check]") {
  std::vector<std::uint32_t> v{1, 2, 2, 5, 4, 6};
  const auto r = gpulab::check_sorted<std::uint32_t>(v);
  CHECK_FALSE(r.ok);
  CHECK(r.first_mismatch == 4);
  std::vector<std::uint32_t> s{1, 1, 2};
  CHECK(gpulab::check_sorted<std::uint32_t>(s).ok);
}

TEST_CASE("check_permutation catches lost and invented elements", "[cpu][check]") {
  std::vector<int> in{3, 1, 2, 2}, good{1, 2, 2, 3}, lost{1, 2, 3, 3};
  CHECK(gpulab::check_permutation<int>(in, good).ok);
  CHECK_FALSE(gpulab::check_permutation<int>(in, lost).ok);
}
