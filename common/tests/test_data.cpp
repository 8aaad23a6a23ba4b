#include <algorithm>
#include <set>

#include "gpulab/data.hpp"
#include "gpulab/testing.hpp"

using gpulab::Distribution;

TEST_CASE("generators are deterministic in the seed", "[cpu][data]") {
  for (auto d : gpulab::all_distributions()) {
    INFO(gpulab::to_string(d));
    CHECK(gpulab::generate_int32(d, 1000, 7) == gpulab::generate_int32(d, 1000, 7));
    CHECK(gpulab::generate_float(d, 1000, 7) == gpulab::generate_float(d, 1000, 7));
  }
  CHECK(gpulab::generate_int32(Distribution::uniform, 1000, 7) != gpulab::generate_int32(Distribution::uniform, 1000, 8));
}

TEST_CASE("generators respect their distribution", "[cpu][data]") {
  const auto u = gpulab::generate_int32(Distribution::uniform, 10000, 1, -5, 5);
  CHECK(*std::min_element(u.begin(), u.end()) == -5);
  CHECK(*std::max_element(u.begin(), u.end()) == 5);
  const auto small = gpulab::generate_int32(Distribution::small_range, 10000, 1);
  CHECK(*std::min_element(small.begin(), small.end()) >= 0);
  CHECK(*std::max_element(small.begin(), small.end()) <= 49);
  const auto eq = gpulab::generate_int32(Distribution::all_equal, 100, 1);
  CHECK(std::set<int>(eq.begin(), eq.end()).size() == 1);
  const auto sorted = gpulab::generate_int32(Distribution::sorted, 1000, 1);
  CHECK(std::is_sorted(sorted.begin(), sorted.end()));
  const auto rev = gpulab::generate_int32(Distribution::reverse, 1000, 1);
  CHECK(std::is_sorted(rev.rbegin(), rev.rend()));
  const auto few = gpulab::generate_uint32(Distribution::few_unique, 1000, 1);
  CHECK(std::set<std::uint32_t>(few.begin(), few.end()).size() <= 4);
  const auto full = gpulab::generate_uint32(Distribution::full_range, 100000, 1);
  CHECK(*std::max_element(full.begin(), full.end()) > 0xF0000000u);
}

TEST_CASE("distribution names round-trip", "[cpu][data]") {
  for (auto d : gpulab::all_distributions()) CHECK(gpulab::parse_distribution(gpulab::to_string(d)) == d);
  CHECK(gpulab::parse_distribution("small_range") == Distribution::small_range);
  CHECK_FALSE(gpulab::parse_distribution("gaussian").has_value());
}

TEST_CASE("edge sizes hold the sizes that break GPU code", "[cpu][data]") {
  const auto s = gpulab::edge_sizes(10, 12, 1 << 24);
  for (std::size_t n : {0ul, 1ul, 31ul, 32ul, 33ul, 1023ul, 1025ul, 1024ul, 1021ul, 4096ul, 4093ul, 1ul << 24})
    CHECK(std::find(s.begin(), s.end(), n) != s.end());
  CHECK(std::is_sorted(s.begin(), s.end()));
}
