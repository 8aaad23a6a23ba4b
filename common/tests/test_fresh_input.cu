// The replay guard's device parts (gpulab/fresh_input.cuh): the sort verdict catches each way a
// timed run can be wrong, and the device draw is a function of its seed.
#include <cstdint>
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "gpulab/fresh_input.cuh"
#include "gpulab/testing.hpp"

namespace {

using u32 = std::uint32_t;

struct Plain {
  __device__ u32 operator()(u32 bits) const { return bits; }
};

// The verdict on host arrays, uploaded; values empty: keys only.
gpulab::CheckResult judge(const std::vector<u32>& in, const std::vector<u32>& out, const std::vector<u32>& values = {},
                          std::size_t segment = 0) {
  gpulab::DeviceBuffer<u32> d_in(in), d_out(out), d_values(values);
  return gpulab::judge_sort_on_device(d_in.data(), d_out.data(), values.empty() ? nullptr : d_values.data(), in.size(),
                                      segment, Plain{});
}

bool says(const gpulab::CheckResult& r, const std::string& what) { return !r.ok && r.message.find(what) != std::string::npos; }

}  // namespace

TEST_CASE("GPU: judge_sort_on_device passes a sort and names each way a run is wrong", "[gpu][fresh-input]") {
  const std::vector<u32> in{5, 3, 9, 3, 1, 7, 3, 2};
  const std::vector<u32> sorted{1, 2, 3, 3, 3, 5, 7, 9};
  const std::vector<u32> positions{4, 7, 1, 3, 6, 0, 5, 2};  // stable: the three 3s in input order
  CHECK(judge(in, sorted).ok);
  CHECK(judge(in, sorted, positions).ok);
  CHECK(judge({}, {}).ok);

  SECTION("out of order") { CHECK(says(judge(in, {1, 3, 2, 3, 3, 5, 7, 9}), "not sorted at 1")); }
  SECTION("a key replaced by another that keeps the order (keys only: the fingerprint)") {
    CHECK(says(judge(in, {1, 2, 3, 3, 3, 5, 8, 9}), "not the input keys"));
  }
  SECTION("a replayed answer: sorted, but another input's keys") {
    CHECK(says(judge({8, 6, 4, 2, 0, 1, 3, 5}, sorted), "not the input keys"));
  }
  SECTION("pairs: equal keys out of input order") {
    CHECK(says(judge(in, sorted, {4, 7, 3, 1, 6, 0, 5, 2}), "unstable at 2"));
  }
  SECTION("pairs: a value that is not its key's position, or out of range") {
    CHECK(says(judge(in, sorted, {4, 7, 1, 3, 6, 5, 5, 2}), "value at 5"));
    CHECK(says(judge(in, sorted, {4, 7, 1, 3, 6, 0, 5, 99}), "value at 7"));
  }
  SECTION("segments: each sorted in place, and a key that moved to another segment") {
    CHECK(judge({4, 2, 3, 1}, {2, 4, 1, 3}, {}, 2).ok);
    CHECK(says(judge({4, 2, 3, 1}, {1, 2, 3, 4}, {}, 2), "tile's keys"));
    CHECK(says(judge({4, 2, 3, 1}, {1, 2, 3, 4}, {1, 3, 2, 0}, 2), "value at 0 (tile 0)"));
  }
}

TEST_CASE("GPU: judge_sort_on_device at a size of many blocks: one wrong key in 2^22 is found", "[gpu][fresh-input]") {
  const std::size_t n = std::size_t{1} << 22;
  std::vector<u32> in(n), out(n);
  std::iota(out.begin(), out.end(), 0u);
  for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<u32>((i * 2654435761u) % n);  // a permutation of 0..n-1
  CHECK(judge(in, out).ok);
  out[n - 3] = out[n - 4];  // sorted still, one key lost, one doubled
  CHECK(says(judge(in, out), "not the input keys"));
}

TEST_CASE("GPU: draw_uniform_floats is a function of its seed, inside [lo, hi)", "[gpu][fresh-input]") {
  const std::size_t n = 100003;
  gpulab::DeviceBuffer<float> a(n), b(n), c(n);
  gpulab::draw_uniform_floats(a.data(), n, 42);
  gpulab::draw_uniform_floats(b.data(), n, 42);
  gpulab::draw_uniform_floats(c.data(), n, 43);
  const auto ha = a.download(), hb = b.download(), hc = c.download();
  CHECK(ha == hb);
  std::size_t same = 0;
  for (std::size_t i = 0; i < n; ++i) {
    same += ha[i] == hc[i];
    REQUIRE(ha[i] >= -1.0f);
    REQUIRE(ha[i] < 1.0f);
  }
  CHECK(same < n / 1000);
}

TEST_CASE("GPU: DrawPool draws distinct pool values, another subset and order per seed", "[gpu][fresh-input]") {
  const std::size_t n = 1000, size = gpulab::DrawPool<int>::size_for(n);
  REQUIRE(size == 2048);
  std::vector<int> values(size);
  std::iota(values.begin(), values.end(), 0);  // value = pool position: a draw shows where it gathered
  const gpulab::DrawPool<int> pool(values);
  gpulab::DeviceBuffer<int> a(n), b(n);
  pool.draw(a.data(), n, 1);
  pool.draw(b.data(), n, 2);
  auto ha = a.download(), hb = b.download();
  CHECK(ha != hb);
  std::sort(ha.begin(), ha.end());
  CHECK(std::adjacent_find(ha.begin(), ha.end()) == ha.end());  // n distinct positions
  CHECK_THROWS(gpulab::DrawPool<int>(std::vector<int>(1000)));   // not a power of two
}

TEST_CASE("GPU: judge_exclusive_sum_on_device checks every element exactly, wrapping", "[gpu][fresh-input]") {
  const std::vector<std::int32_t> in{5, -2, 2147483647, 1, 0, 7};
  std::vector<std::int32_t> out(in.size());
  std::uint32_t running = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    out[i] = static_cast<std::int32_t>(running);
    running += static_cast<std::uint32_t>(in[i]);
  }
  auto judge = [&](const std::vector<std::int32_t>& got) {
    gpulab::DeviceBuffer<std::int32_t> d_in(in), d_out(got);
    return gpulab::judge_exclusive_sum_on_device(d_in.data(), d_out.data(), in.size());
  };
  CHECK(judge(out).ok);
  auto wrong = out;
  wrong[4] += 1;
  CHECK(says(judge(wrong), "element 4"));
  auto inclusive = out;
  for (std::size_t i = 0; i < in.size(); ++i) inclusive[i] = static_cast<std::int32_t>(static_cast<std::uint32_t>(out[i]) + static_cast<std::uint32_t>(in[i]));
  CHECK(says(judge(inclusive), "element 0"));
}

TEST_CASE("GPU: DrawCopy keeps the draw a run may overwrite", "[gpu][fresh-input]") {
  gpulab::DeviceBuffer<int> input(std::vector<int>{3, 1, 2});
  gpulab::DrawCopy<int> copy(input.size());
  copy.take(input.data());
  input.zero();
  std::vector<int> kept(3);
  REQUIRE(cudaMemcpy(kept.data(), copy.data(), 3 * sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(kept == std::vector<int>{3, 1, 2});
}
