// The bitonic lab's model on the CPU: launch sequences against the closed forms (README.md, "The model")
// and seed 002's counts, the network run launch by launch (both pads: pad = virtual's skipping is
// exact), the known-bad direction rules, the bank model, the bytes, occupancy, the paths and the
// inputs and verdict. All [cpu]: no GPU needed.
// Run:  ./build/default/labs/bitonic/test-bitonic-reference "[model]"
#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "bitonic_model.hpp"
#include "gpulab/testing.hpp"

using namespace bitonic;
using namespace bitonic::model;

namespace {

const Stage kGpuStages[] = {Stage::phase0, Stage::phase1, Stage::phase2, Stage::phase3,
                            Stage::phase4, Stage::phase4_conflict_free, Stage::phase5_fused};

Shape shape_of(int block, Pad pad = Pad::sentinel) {
  Shape s;
  s.block = block;
  s.pad = pad;
  return s;
}
// phase5-fused with a tile of 2^t keys and q strides per launch (the host tests use small tiles).
Shape fused_shape(int t, int q, Pad pad = Pad::sentinel) {
  Shape s = shape_of(512, pad);
  s.fused_tile_log2 = t;
  s.fused_strides = q;
  return s;
}

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

// The network, launch by launch, against std::sort.
bool network_ok(Stage s, std::size_t n, const Shape& shape, Input input, DirectionRule rule = DirectionRule::correct,
                NetworkReport* out = nullptr) {
  const auto keys = make_keys(input, n, 17 + n);
  NetworkReport r;
  run_network(keys, launch_sequence(s, n, shape), shape.pad, tile_log2(s, shape), &r, rule);
  if (out) *out = r;
  return r.sorted && r.virtual_stayed_above;
}

}  // namespace

TEST_CASE("launches: the sequences equal the closed forms R0..R5 for every stage, L = 1..30", "[cpu][model]") {
  for (Stage s : kGpuStages)
    for (int block = 64; block <= 1024; block *= 2) {
      std::vector<Shape> shapes{shape_of(block)};
      if (s == Stage::phase5_fused) {
        if (block != 64) break;
        shapes.clear();
        for (int q = 1; q <= 9; ++q) shapes.push_back(fused_shape(14, q));
        shapes.push_back(fused_shape(10, 3));
      }
      for (const Shape& shape : shapes) {
        const int q = s == Stage::phase5_fused ? shape.fused_strides : 1;
        const int t = tile_log2(s, shape);
        CHECK(launches(s, 0, shape) == 0);
        CHECK(launches(s, 1, shape) == 1);
        for (int L = 1; L <= 30; ++L) {
          const std::size_t n = std::size_t{1} << L;
          INFO(to_string(s) << " block=" << block << " L=" << L << " t=" << t << " q=" << q);
          const long r = launches(s, n, shape);
          CHECK(r == formula_launches(s, L, t, q));
          // a non-power of two runs the network of 2^L: the same launches, both pads
          Shape virt = shape;
          virt.pad = Pad::virtual_inf;
          if (L > 2) CHECK(launches(s, n - 3, virt) == r);
          if (L > 1) CHECK(launches(s, n / 2 + 1, shape) == r);
        }
      }
    }
}

TEST_CASE("launches: the closed forms' counts at 2^24 and the boundaries L = t, t + 1", "[cpu][model]") {
  const std::size_t n24 = std::size_t{1} << 24;
  const long want11[] = {300, 300, 235, 225, 105, 105};
  const long want10[] = {300, 300, 246, 237, 120, 120};
  for (int i = 0; i < 6; ++i) {
    CHECK(launches(kGpuStages[i], n24, shape_of(1024)) == want11[i]);
    CHECK(launches(kGpuStages[i], n24, shape_of(512)) == want10[i]);
  }
  CHECK(launches(Stage::phase5_fused, n24, shape_of(512)) == 22);  // t = 14, q = 9
  CHECK(launches(Stage::phase5_fused, std::size_t{1} << 23, shape_of(512)) == 19);
  CHECK(launches(Stage::phase5_fused, n24, fused_shape(13, 4)) == 33);
  CHECK(launches(Stage::phase5_fused, n24, fused_shape(13, 1)) == 78);
  CHECK(launches(Stage::phase4, 1024, shape_of(512)) == 1);   // L = t
  CHECK(launches(Stage::phase4, 2048, shape_of(512)) == 3);   // L = t + 1
  CHECK(launches(Stage::phase3, 2048, shape_of(512)) == 3);
  CHECK(launches(Stage::phase2, 2048, shape_of(512)) == 12);
  const auto seq = launch_sequence(Stage::phase4, 4096, shape_of(512));
  const std::vector<Launch> want{{Kernel::tile_sort, 10, 0, 0},  {Kernel::global_step, 11, 10, 10},
                                 {Kernel::tile_merge, 11, 9, 0}, {Kernel::global_step, 12, 11, 11},
                                 {Kernel::global_step, 12, 10, 10}, {Kernel::tile_merge, 12, 9, 0}};
  CHECK(seq == want);
  const auto fused = launch_sequence(Stage::phase5_fused, std::size_t{1} << 19, fused_shape(13, 4));
  REQUIRE(fused.size() == 1u + 8 + 6);  // d = 1..6: 1, 1, 1, 1, 2, 2 groups, 6 merges, 1 sort
  CHECK((fused[fused.size() - 3].stride_hi == 18 && fused[fused.size() - 3].stride_lo == 15));
  CHECK((fused[fused.size() - 2].stride_hi == 14 && fused[fused.size() - 2].stride_lo == 13));
}

TEST_CASE("which tile did seed 002 use: no t fits exactly, every count is the formula minus one", "[cpu][model]") {
  for (Stage s : {Stage::phase0, Stage::phase2, Stage::phase3, Stage::phase4}) CHECK(tiles_matching_seed002(s, 0).empty());
  CHECK(tiles_matching_seed002(Stage::phase0, 1).size() == 23u);  // 299 = R0 - 1 for every t
  CHECK(tiles_matching_seed002(Stage::phase2, 1) == std::vector<int>{11});
  CHECK(tiles_matching_seed002(Stage::phase3, 1) == std::vector<int>{11});
  CHECK(tiles_matching_seed002(Stage::phase4, 1) == std::vector<int>{10});
  CHECK(formula_launches(Stage::phase2, 24, 11) - formula_launches(Stage::phase3, 24, 11) == 10);  // 002's "-10"
  CHECK_FALSE(seed002_launches(Stage::phase1).has_value());
}

TEST_CASE("network: phase 0's network sorts every n <= 2^11, both pads; pad = virtual never moves +infinity", "[cpu][model]") {
  int bad = 0;
  for (std::size_t n = 0; n <= 2048; ++n)
    for (Pad pad : {Pad::sentinel, Pad::virtual_inf})
      for (Input in : {Input::uniform, Input::int_max})
        if (!network_ok(Stage::phase0, n, shape_of(64, pad), in)) {
          ++bad;
          UNSCOPED_INFO("phase0 n=" << n << " pad=" << to_string(pad) << " input=" << to_string(in));
        }
  CHECK(bad == 0);
}

TEST_CASE("network: the tile stages with small tiles (t = 2, 3, 5), every n <= 2^9, both pads", "[cpu][model]") {
  int bad = 0;
  for (int block : {2, 4, 16})
    for (Stage s : {Stage::phase2, Stage::phase3, Stage::phase4})  // phase1 = phase0's, conflict-free = phase4's sequence
      for (std::size_t n = 0; n <= 512; ++n)
        for (Pad pad : {Pad::sentinel, Pad::virtual_inf})
          if (!network_ok(s, n, shape_of(block, pad), Input::uniform)) {
            ++bad;
            UNSCOPED_INFO(to_string(s) << " block=" << block << " n=" << n << " pad=" << to_string(pad));
          }
  CHECK(bad == 0);
}

TEST_CASE("network: the real tiles and phase 5's on sampled sizes, every input, both pads", "[cpu][model]") {
  int bad = 0;
  const std::size_t sizes[] = {127, 128, 129, 1000, 2047, 2048, 2049, 8191, 8193, 20000, 65536, 65537, 100003};
  for (std::size_t n : sizes)
    for (Stage s : kGpuStages)
      for (Pad pad : {Pad::sentinel, Pad::virtual_inf})
        for (Input in : all_inputs()) {
          Shape sh = shape_of(in == Input::uniform ? 64 : 512, pad);
          if (s == Stage::phase5_fused) sh = fused_shape(10 + static_cast<int>(n % 3), 1 + static_cast<int>(n % 5), pad);
          if (!network_ok(s, n, sh, in)) {
            ++bad;
            UNSCOPED_INFO(to_string(s) << " n=" << n << " pad=" << to_string(pad) << " input=" << to_string(in));
          }
        }
  CHECK(bad == 0);
  // phase 5's design (2^14-key tiles, 9 strides) at L = 17 and 20 (a level of more than 5 strides)
  for (Pad pad : {Pad::sentinel, Pad::virtual_inf})
    for (std::size_t n : {std::size_t{100003}, (std::size_t{1} << 19) + 7}) CHECK(network_ok(Stage::phase5_fused, n, shape_of(512, pad), Input::uniform));
}

TEST_CASE("padding: the alternating network moves padding below n; virtual skips comparators", "[cpu][model]") {
  int moved = 0;
  for (std::size_t n = 3; n <= 300; ++n) {
    if (gpulab::is_pow2(n)) continue;
    const auto keys = make_keys(Input::uniform, n, n);
    NetworkReport r;
    run_network(keys, launch_sequence(Stage::phase0, n, shape_of(64)), Pad::sentinel, 0, &r, DirectionRule::correct, true);
    moved += r.virtual_moved_below;
  }
  CHECK(moved > 0);
  NetworkReport v, p;
  const auto keys = make_keys(Input::uniform, 1000, 1);
  run_network(keys, launch_sequence(Stage::phase0, 1000, shape_of(64, Pad::virtual_inf)), Pad::virtual_inf, 0, &v);
  run_network(keys, launch_sequence(Stage::phase0, 1000, shape_of(64)), Pad::sentinel, 0, &p);
  CHECK(v.comparators < p.comparators);
}

TEST_CASE("known-bad direction rules: all-ascending merges fail first at L = t + 2, block parity at t + 1", "[cpu][model]") {
  // t = 3 (block 4)
  for (DirectionRule rule : {DirectionRule::merge_ascending, DirectionRule::merge_by_parity}) {
    int first_bad_L = 0;
    for (std::size_t n = 2; n <= 256 && first_bad_L == 0; ++n)
      for (Input in : {Input::uniform, Input::organ_pipe, Input::reverse})
        if (!network_ok(Stage::phase4, n, shape_of(4), in, rule)) {
          first_bad_L = network_log2(n);
          break;
        }
    CHECK(first_bad_L == (rule == DirectionRule::merge_ascending ? 5 : 4));
  }
  // the lab's tile (t = 10): all-ascending merges pass at T + 1 .. 2T and fail at 4T + 3
  CHECK(network_ok(Stage::phase4, 2048, shape_of(512), Input::uniform, DirectionRule::merge_ascending));
  CHECK(network_ok(Stage::phase4, 1025, shape_of(512), Input::reverse, DirectionRule::merge_ascending));
  CHECK_FALSE(network_ok(Stage::phase4, 4099, shape_of(512), Input::uniform, DirectionRule::merge_ascending));
}

TEST_CASE("bank model: the textbook step is 2-way below stride 32; the closed form's per-block counts", "[cpu][model]") {
  for (int block = 64; block <= 1024; block *= 2)
    for (int e = 0; e <= 10 && (1 << e) <= block; ++e) {
      const auto s = gpulab::summarize(shared_step_requests(block, e));
      INFO("block=" << block << " e=" << e);
      CHECK(s.excess() == (e < 5 ? 4L * (block / 32) : 0));
      if (e < 5) CHECK(s.max_way == 2);
    }
  const Shape s1024 = shape_of(1024);
  CHECK(gpulab::summarize(block_requests(Stage::phase4, Launch{Kernel::tile_sort, 11}, s1024)).excess() == 5760);
  CHECK(gpulab::summarize(block_requests(Stage::phase4, Launch{Kernel::tile_merge, 12, 10, 0}, s1024)).excess() == 640);
  CHECK(textbook_tile_sort_excess(11) == 5760);
  CHECK(textbook_tile_merge_excess(11) == 640);
  // whole runs at n = 2^20, block 512 (t = 10), both pads
  const std::size_t n = std::size_t{1} << 20;
  for (Pad pad : {Pad::sentinel, Pad::virtual_inf}) {
    const Shape sh = shape_of(512, pad);
    const long tiles = 1024, warps = 16;
    CHECK(*predicted_excess(Stage::phase4, n, sh) == tiles * 4 * warps * (15 + 5 * 5) + 10 * tiles * 4 * warps * 5);
    CHECK(*predicted_excess(Stage::phase4, n, sh) == 5898240);
    CHECK(*predicted_excess(Stage::phase2, n, sh) == tiles * 4 * warps * 40);
    CHECK(*predicted_excess(Stage::phase3, n, sh) == tiles * 4 * warps * 45);
    CHECK(*predicted_excess(Stage::phase4_conflict_free, n, sh) == 0);
    CHECK(*predicted_excess(Stage::phase0, n, sh) == 0);
    CHECK_FALSE(predicted_excess(Stage::phase5_fused, n, sh).has_value());
    long want1 = 0;  // phase 1: 4 per warp for every launch with a stride < 32, min(s, 5) per level
    for (int s = 1; s <= 20; ++s) want1 += std::min(s, 5) * (long(n) / 2 / 32) * 4;
    CHECK(*predicted_excess(Stage::phase1, n, sh) == want1);
  }
  // every kernel of the conflict-free stage, request by request
  for (int block = 64; block <= 1024; block *= 2) {
    const Shape sh = shape_of(block);
    for (const Launch& l : launch_sequence(Stage::phase4_conflict_free, std::size_t{1} << 16, sh))
      CHECK(gpulab::summarize(block_requests(Stage::phase4_conflict_free, l, sh)).max_way <= 1);
  }
}

TEST_CASE("bytes: 2 n 4 R for n = 2^L; pad = virtual's skipped pairs against brute force", "[cpu][model]") {
  for (Stage s : kGpuStages)
    for (Pad pad : {Pad::sentinel, Pad::virtual_inf})
      for (int L : {1, 5, 10, 12, 20}) {
        const std::size_t n = std::size_t{1} << L;
        const Shape sh = shape_of(256, pad);
        CHECK(traffic(s, n, sh).bytes == 2.0 * n * 4 * launches(s, n, sh));
        if (L >= 5) CHECK(traffic(s, n, sh).agpu_ios == 2.0 * double(n / 32) * launches(s, n, sh));  // blocks of b = 32 keys
      }
  for (std::size_t n = 2; n <= 300; ++n) {
    const auto seq = launch_sequence(Stage::phase0, n, shape_of(64, Pad::virtual_inf));
    const auto bytes = bytes_per_launch(Stage::phase0, n, shape_of(64, Pad::virtual_inf));
    for (std::size_t i = 0; i < seq.size(); ++i) {
      const int e = seq[i].stride_hi, s = seq[i].level;
      double moved = 0;
      for (std::size_t lo = 0; lo < n; ++lo) {
        if ((lo >> e) & 1) continue;
        const std::size_t hi = e == s - 1 ? lo ^ ((std::size_t{2} << e) - 1) : lo + (std::size_t{1} << e);
        moved += hi < n ? 2 : (i == 0 ? 1 : 0);
      }
      CHECK(bytes[i] == 8.0 * moved);
    }
  }
  const std::size_t n = 10000000;  // 10^7 padded to 2^24
  const double ratio = traffic(Stage::phase4, n, shape_of(512)).bytes / traffic(Stage::phase4, n, shape_of(512, Pad::virtual_inf)).bytes;
  CHECK(ratio > 1.6);
  CHECK(ratio < 1.75);
}

TEST_CASE("time model: R sigma + bytes / bandwidth; the I/O bound of phase 4 over phase 0", "[cpu][model]") {
  const std::size_t n24 = std::size_t{1} << 24;
  const double sweep_ms = 2.0 * double(n24) * 4 / 3000e9 * 1e3;  // one read and write of 2^24 keys at 3000 GB/s
  CHECK(predicted_ms(Stage::phase0, n24, shape_of(512), 3.0, 3000.0) == Catch::Approx(300 * 0.003 + 300 * sweep_ms));
  CHECK(predicted_ms(Stage::phase4, n24, shape_of(512), 3.0, 3000.0) == Catch::Approx(120 * 0.003 + 120 * sweep_ms));
  CHECK(predicted_ms(Stage::phase5_fused, n24, shape_of(512), 0.0, 3000.0) == Catch::Approx(22 * sweep_ms));
  CHECK(predicted_ms(Stage::phase4, 0, shape_of(512), 3.0, 3000.0) == 0.0);
  // memory-bound, phase 4 can beat phase 0 by at most R0 / R4: 2.5x with 1024-key tiles, 300/105 with 2048
  auto bound = [&](int block) {
    return traffic(Stage::phase0, n24, shape_of(block)).bytes / traffic(Stage::phase4, n24, shape_of(block)).bytes;
  };
  CHECK(bound(512) == Catch::Approx(2.5));
  CHECK(bound(1024) == Catch::Approx(300.0 / 105.0));
  // pad = virtual moves fewer bytes than sentinel at 10^7, never more launches
  const std::size_t n7 = 10000000;
  CHECK(predicted_ms(Stage::phase4, n7, shape_of(512, Pad::virtual_inf), 3.0, 3000.0) <
        predicted_ms(Stage::phase4, n7, shape_of(512), 3.0, 3000.0));
}

TEST_CASE("occupancy: the sm_90 limits", "[cpu][model]") {
  auto o = occupancy(1024, 32, 8192);
  CHECK((o.blocks_per_sm == 2 && o.warps_per_sm == 64));
  o = occupancy(512, 64, shared_bytes(Stage::phase5_fused, Kernel::tile_merge, shape_of(512)));
  CHECK((o.blocks_per_sm == 2 && o.limited_by == "registers"));
  CHECK(shared_bytes(Stage::phase5_fused, Kernel::tile_merge, shape_of(512)) == (16384 + 512) * 4);
  o = occupancy(256, 62, 0);
  CHECK(o.warps_per_sm == 32);
  o = occupancy(256, 20, 2048);
  CHECK(o.warps_per_sm == 64);
}

TEST_CASE("paths: the kernels and branches a problem reaches", "[cpu][model]") {
  const Shape sen = shape_of(512), virt = shape_of(512, Pad::virtual_inf);
  CHECK(paths(Stage::phase0, 0, sen) == std::vector<std::string>{"n = 0: no launch"});
  CHECK(has(paths(Stage::phase4, 1, sen), "n = 1: one launch writes the key"));
  CHECK(has(paths(Stage::phase4, 1000, sen), "L <= t: the tile sort alone"));
  CHECK(has(paths(Stage::phase4, 1000, sen), "n not a power of two: guarded loads and stores"));
  CHECK(has(paths(Stage::phase4, 40000, sen), "pad = sentinel: a padded copy in scratch"));
  CHECK(has(paths(Stage::phase4, 40000, sen), "L > t: merge levels above the tile"));
  CHECK(has(paths(Stage::phase0, 1000, sen), "one block per launch"));
  CHECK(has(paths(Stage::phase0, 40000, sen), "several blocks per launch"));
  CHECK(has(paths(Stage::phase5_fused, 40000, virt), "a mirrored first group"));
  CHECK_FALSE(has(paths(Stage::phase5_fused, 40000, sen), "a group launch that transposes"));
  CHECK(has(paths(Stage::phase5_fused, (std::size_t{1} << 19) + 3, sen), "a group launch that transposes"));
  CHECK(paths(Stage::cpu_network, 1000, sen).empty());
}

TEST_CASE("inputs and the verdict", "[cpu][model]") {
  const auto neg = make_keys(Input::negative, 1000, 3);
  CHECK(std::all_of(neg.begin(), neg.end(), [](std::int32_t k) { return k < 0; }));
  const auto mx = make_keys(Input::int_max, 1000, 3);
  CHECK((mx[0] == INT_MAX && mx[999] == INT_MAX));
  CHECK(make_keys(Input::uniform, 100, 9) == make_keys(Input::uniform, 100, 9));
  const auto pipe = make_keys(Input::organ_pipe, 101, 3);
  CHECK(std::is_sorted(pipe.begin(), pipe.begin() + 50));
  CHECK(std::is_sorted(pipe.begin() + 50, pipe.end(), [](int a, int b) { return b < a; }));
  CHECK(input_for(gpulab::Distribution::full_range, 0) == Input::uniform);
  CHECK(input_for(gpulab::Distribution::uniform, 3) == Input::negative);
  // the verdict's messages
  const auto keys = make_keys(Input::uniform, 1000, 5);
  const auto want = sorted_copy(keys);
  CHECK(check_sorted(keys, want, want).ok);
  std::vector<std::int32_t> as_unsigned = want;
  std::sort(as_unsigned.begin(), as_unsigned.end(),
            [](std::int32_t a, std::int32_t b) { return static_cast<std::uint32_t>(a) < static_cast<std::uint32_t>(b); });
  CHECK(check_sorted(keys, want, as_unsigned).message.find("as unsigned") != std::string::npos);
  std::vector<std::int32_t> padded = want;
  padded[3] = INT_MAX;
  CHECK(check_sorted(keys, want, padded).message.find("padding came back") != std::string::npos);
  std::vector<std::int32_t> poison(1000, static_cast<std::int32_t>(0xA5A5A5A5u));
  CHECK(check_sorted(keys, want, poison).message.find("never written") != std::string::npos);
  std::vector<std::int32_t> swapped = want;
  std::swap(swapped[10], swapped[11]);
  CHECK(check_sorted(keys, want, swapped).message.find("not sorted: key 10") != std::string::npos);
}
