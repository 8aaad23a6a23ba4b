// Every reference stage (CUB baselines aside) x operator x two distributions at the given sizes,
// exact against the model's fold, and the launches against the model's R(n) (2 "SMs" x 2 blocks).
// Usage: reduction-host-emulation [n [block]]   (default: 16 sizes, block 64). Exit 1 on any error.
#include <cstdio>
#include <cstring>
#include <string>
#include "reduction_model.hpp"
using namespace reduction;
namespace model = reduction::model;
int fails = 0, runs = 0;
template <class Op>
void check(const char* id, void (*fn)(const Value<Op>*, std::size_t, Value<Op>*, ReduceWorkspace&, Op), std::size_t n,
           int block, int bps, gpulab::Distribution d) {
  using T = Value<Op>;
  auto in = model::make_input<Op>(d, n, 3 + n);
  const T want = model::fold<Op>(std::span<const T>(in));
  std::vector<unsigned char> mem(reduce_workspace_bytes(n, 16));
  ReduceWorkspace ws;
  static_cast<gpulab::Scratch&>(ws) = gpulab::Scratch(mem.data(), mem.size()); ws.multiprocessors = 2; ws.config.block = block; ws.config.blocks_per_sm = bps;
  T out;
  std::memset(&out, 0xA5, sizeof out);
  emu::launches = 0;
  fn(in.data(), n, &out, ws, Op{});
  const long want_l = model::launches(*model::parse_stage(id), n, model::Shape{block, 2 * bps, int(sizeof(T))});
  if (emu::launches != want_l) { ++fails; std::printf("LAUNCHES %s %s n=%zu: %ld vs model %ld\n", id, Op::name, n, emu::launches, want_l); }
  ++runs;
  if (!(out == want)) { ++fails; std::printf("WRONG %s %s n=%zu block=%d\n", id, Op::name, n, block); }
}
template <class Op>
void all(std::size_t n, int block, int bps) {
  for (auto d : {gpulab::Distribution::uniform, gpulab::Distribution::full_range}) {
    check<Op>("global-tree", reduce_global_tree<Op>, n, block, bps, d);
    check<Op>("tree-interleaved", reduce_tree_interleaved<Op>, n, block, bps, d);
    if constexpr (Op::commutative) {
      check<Op>("tree", reduce_tree<Op>, n, block, bps, d);
      check<Op>("cascading", reduce_cascading<Op>, n, block, bps, d);
    }
    check<Op>("pipeline-heap", reduce_pipeline_heap<Op>, n, block, bps, d);
    check<Op>("pipeline", reduce_pipeline<Op>, n, block, bps, d);
    check<Op>("matrix", reduce_matrix<Op>, n, block, bps, d);
    check<Op>("ordered-registers", reduce_ordered_registers<Op>, n, block, bps, d);
  }
}
int main(int argc, char** argv) {
  std::vector<std::size_t> sizes{0, 1, 2, 31, 32, 33, 127, 128, 129, 1023, 1025, 4093, 4096, 8191, 8193, 20000};
  if (argc > 1) sizes = {std::stoull(argv[1])};
  const int blk = argc > 2 ? std::stoi(argv[2]) : 64;
  for (auto n : sizes) {
    all<SumOp>(n, blk, 2); all<MaxOp>(n, blk, 2); all<IntervalOp>(n, blk, 2); all<AffineOp>(n, blk, 2); all<Mat2Op>(n, blk, 2);
    std::printf("n=%zu done (%d runs, %d wrong)\n", n, runs, fails); std::fflush(stdout);
  }
  return fails ? 1 : 0;
}
