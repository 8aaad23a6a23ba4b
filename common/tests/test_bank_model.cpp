// The bank model against cases whose answer is known by hand (seed 000 §3's bank matrix).
#include "gpulab/bank_model.hpp"
#include "gpulab/testing.hpp"

using gpulab::analyze_bank_conflicts;
using gpulab::WarpAccess;

namespace {

// Seed 003 quotes GPU Gems 3's padding macro with its parentheses lost. What it meant:
constexpr std::uint32_t conflict_free_offset(std::uint32_t n) { return (n >> 5) + (n >> 10); }
// What it computes: `n >> NUM_BANKS + n >> 10` parses as `(n >> (32 + n)) >> 10`. A 32-bit shift by
// 32 or more is undefined in C++; the GPU's shr clamps it, giving 0 — so the "padding" adds nothing.
constexpr std::uint32_t shift_right_as_gpu(std::uint32_t x, std::uint32_t s) { return s >= 32 ? 0 : x >> s; }
constexpr std::uint32_t seed003_offset_as_written(std::uint32_t n) { return shift_right_as_gpu(shift_right_as_gpu(n, 32 + n), 10); }

// The up-sweep of a work-efficient scan at level `offset`: lane t reads element 2*offset*(t+1) - 1.
template <class Offset>
WarpAccess upsweep(std::uint32_t offset, Offset pad) {
  return WarpAccess::words([&](int t) {
    const std::uint32_t i = 2 * offset * (t + 1) - 1;
    return i + pad(i);
  });
}

}  // namespace

TEST_CASE("bank model: consecutive words are conflict-free", "[cpu][bank-model]") {
  const auto r = analyze_bank_conflicts(WarpAccess::words([](int t) { return t; }));
  CHECK(r.wavefronts == 1);
  CHECK(r.excess() == 0);
}

TEST_CASE("bank model: stride 2 is a 2-way conflict", "[cpu][bank-model]") {
  const auto r = analyze_bank_conflicts(WarpAccess::words([](int t) { return 2 * t; }));
  CHECK(r.max_way == 2);
  CHECK(r.wavefronts == 2);
  CHECK(r.excess() == 1);
}

TEST_CASE("bank model: stride 32 is a 32-way conflict", "[cpu][bank-model]") {
  const auto r = analyze_bank_conflicts(WarpAccess::words([](int t) { return 32 * t; }));
  CHECK(r.max_way == 32);
  CHECK(r.excess() == 31);
}

TEST_CASE("bank model: a column of a 32x33 padded tile is conflict-free", "[cpu][bank-model]") {
  for (int column = 0; column < 32; ++column) {
    const auto r = analyze_bank_conflicts(WarpAccess::words([&](int row) { return row * 33 + column; }));
    CHECK(r.excess() == 0);
  }
}

TEST_CASE("bank model: a column of an unpadded 32x32 tile is 32-way", "[cpu][bank-model]") {
  const auto r = analyze_bank_conflicts(WarpAccess::words([](int row) { return row * 32 + 5; }));
  CHECK(r.max_way == 32);
}

TEST_CASE("bank model: every lane reading one word is a broadcast", "[cpu][bank-model]") {
  const auto r = analyze_bank_conflicts(WarpAccess::words([](int) { return 7; }));
  CHECK(r.wavefronts == 1);
  CHECK(r.excess() == 0);
}

TEST_CASE("bank model: inactive lanes cost nothing", "[cpu][bank-model]") {
  const auto r = analyze_bank_conflicts(WarpAccess::words([](int t) { return 32 * t; }, 4));
  CHECK(r.max_way == 4);
  const auto none = analyze_bank_conflicts(WarpAccess{});
  CHECK(none.wavefronts == 0);
  CHECK(none.excess() == 0);
}

TEST_CASE("bank model: 64-bit and 128-bit accesses are served in 2 and 4 phases", "[cpu][bank-model]") {
  const auto r64 = analyze_bank_conflicts(WarpAccess::words([](int t) { return t; }, 32, 8));
  CHECK(r64.wavefronts == 2);
  CHECK(r64.excess() == 0);
  const auto r128 = analyze_bank_conflicts(WarpAccess::words([](int t) { return t; }, 32, 16));
  CHECK(r128.wavefronts == 4);
  CHECK(r128.excess() == 0);
  // float2 at stride 2 elements: each half-warp phase touches every bank twice.
  const auto r64s = analyze_bank_conflicts(WarpAccess::words([](int t) { return 2 * t; }, 32, 8));
  CHECK(r64s.max_way == 2);
  CHECK(r64s.excess() == 2);
}

TEST_CASE("bank model: seed 003's offset macro as intended removes the up-sweep conflicts", "[cpu][bank-model]") {
  for (std::uint32_t offset : {1u, 2u, 4u, 8u, 16u}) {
    INFO("up-sweep offset " << offset);
    const auto plain = analyze_bank_conflicts(upsweep(offset, [](std::uint32_t) { return 0u; }));
    const auto padded = analyze_bank_conflicts(upsweep(offset, conflict_free_offset));
    CHECK(plain.max_way == static_cast<int>(std::min(2 * offset, 32u)));
    CHECK(padded.excess() == 0);
  }
}

TEST_CASE("bank model: seed 003's offset macro as written pads nothing", "[cpu][bank-model]") {
  for (std::uint32_t i : {0u, 1u, 31u, 32u, 1000u, 4095u}) CHECK(seed003_offset_as_written(i) == 0);
  for (std::uint32_t offset : {1u, 2u, 4u, 8u, 16u}) {
    const auto plain = analyze_bank_conflicts(upsweep(offset, [](std::uint32_t) { return 0u; }));
    const auto broken = analyze_bank_conflicts(upsweep(offset, seed003_offset_as_written));
    CHECK(broken.wavefronts == plain.wavefronts);
  }
}

TEST_CASE("bank model: the printer marks the conflicting bank", "[cpu][bank-model]") {
  const auto text = gpulab::draw_bank_matrix(WarpAccess::words([](int t) { return 2 * t; }));
  CHECK(text.find("2 wavefronts") != std::string::npos);
  CHECK(text.find("2-way") != std::string::npos);
  CHECK(text.find("<- 2 words in one bank") != std::string::npos);
}

TEST_CASE("bank model: bad access widths are refused", "[cpu][bank-model]") {
  WarpAccess a = WarpAccess::words([](int t) { return t; });
  a.width_bytes = 3;
  CHECK_THROWS_AS(analyze_bank_conflicts(a), std::invalid_argument);
}
