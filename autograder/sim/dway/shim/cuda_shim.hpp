// Host emulation of the CUDA constructs merge_dway.cu's kernels use: every lane is a fiber (a tiny
// x86-64 context switch, switch.S, no signal masks), warp intrinsics are rendezvous of the warp's 32
// fibers, and every rendezvous checks that all 32 lanes reached the same call site (convergence).
// Blocks run one after another; shared memory is poisoned (g_poison) before each.
#pragma once
#include <algorithm>
#include <cassert>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <type_traits>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) alignas(n)

struct uint4 { unsigned x, y, z, w; };
struct ulonglong2 { unsigned long long x, y; };
struct dim3s { unsigned x = 0, y = 0, z = 0; };

namespace sim {

extern "C" void sim_switch(void** from_sp, void* to_sp);

struct Fiber {
  void* sp = nullptr;
  char* stack = nullptr;  // one of g_stacks, reused by every block (allocating them per block cost more than the kernels)
  bool done = false, waiting = false;
  int tid = 0;
};

struct Warp {
  int arrived = 0;
  int kind = -1, site = -1;
  unsigned long long slot[32];
  unsigned long long arg[32];
  unsigned long long res[32];
};

struct Block {
  std::vector<Fiber> fibers;
  std::vector<Warp> warps;
  dim3s tidx, bidx, bdim, gdim;
};

inline Block* g_block = nullptr;
inline Fiber* g_cur = nullptr;
inline void* g_sched_sp = nullptr;
inline std::function<void()> g_kernel;
inline std::vector<unsigned char> g_smem;
inline std::vector<std::vector<char>> g_stacks;
inline unsigned char g_poison = 0xA5;
inline long long g_syncs = 0;

[[noreturn]] inline void fail(const char* what, int site) {
  std::fprintf(stderr, "SIM FAILURE: %s (site %d)\n", what, site);
  std::exit(3);
}

inline void trampoline() {
  g_kernel();
  g_cur->done = true;
  sim_switch(&g_cur->sp, g_sched_sp);
  fail("resumed a finished fiber", 0);
}

enum Kind { kShflIdx, kShflXor, kShflUp, kBallot, kSync };

// One lane arrives at a rendezvous; returns its result.
inline unsigned long long rendezvous(int kind, int site, unsigned long long v, unsigned long long a) {
  Fiber* f = g_cur;
  const int lane = f->tid % 32, w = f->tid / 32;
  Warp& warp = g_block->warps[w];
  if (warp.arrived == 0) { warp.kind = kind; warp.site = site; }
  else if (warp.kind != kind || warp.site != site) fail("lanes of a warp at different warp intrinsics (divergence)", site);
  warp.slot[lane] = v;
  warp.arg[lane] = a;
  if (++warp.arrived == 32) {
    ++g_syncs;
    for (int l = 0; l < 32; ++l) {
      switch (kind) {
        case kShflIdx: warp.res[l] = warp.slot[warp.arg[l] & 31]; break;
        case kShflXor: warp.res[l] = warp.slot[(l ^ warp.arg[l]) & 31]; break;
        case kShflUp: warp.res[l] = (l >= int(warp.arg[l])) ? warp.slot[l - warp.arg[l]] : warp.slot[l]; break;
        case kBallot: {
          unsigned long long b = 0;
          for (int k = 0; k < 32; ++k) b |= (warp.slot[k] ? 1ull : 0ull) << k;
          warp.res[l] = b;
          break;
        }
        case kSync: warp.res[l] = 0; break;
      }
    }
    warp.arrived = 0;
    for (int l = 0; l < 32; ++l) g_block->fibers[w * 32 + l].waiting = false;
    return warp.res[lane];
  }
  f->waiting = true;
  sim_switch(&f->sp, g_sched_sp);
  return warp.res[lane];
}

// Runs a grid: kernel() per thread, blocks one after another.
inline void launch(unsigned grid, unsigned threads, std::size_t smem, const std::function<void()>& kernel) {
  static constexpr std::size_t kStack = 256 * 1024;
  for (unsigned b = 0; b < grid; ++b) {
    Block blk;
    blk.fibers.resize(threads);
    blk.warps.resize((threads + 31) / 32);
    blk.bdim.x = threads;
    blk.gdim.x = grid;
    blk.bidx.x = b;
    g_smem.assign(smem + 64, g_poison);
    g_block = &blk;
    g_kernel = kernel;
    if (g_stacks.size() < threads) g_stacks.resize(threads);
    for (unsigned t = 0; t < threads; ++t) {
      Fiber& f = blk.fibers[t];
      f.tid = t;
      if (g_stacks[t].size() != kStack) g_stacks[t].resize(kStack);
      f.stack = g_stacks[t].data();
      auto top = reinterpret_cast<std::uintptr_t>(f.stack + kStack) & ~std::uintptr_t(15);
      void** sp = reinterpret_cast<void**>(top);
      *--sp = nullptr;
      *--sp = reinterpret_cast<void*>(&trampoline);
      for (int r = 0; r < 6; ++r) *--sp = nullptr;
      f.sp = sp;
    }
    for (;;) {
      bool all_done = true, progress = false;
      for (auto& f : blk.fibers) {
        if (f.done) continue;
        all_done = false;
        if (f.waiting) continue;
        g_cur = &f;
        sim_switch(&g_sched_sp, f.sp);
        progress = true;
      }
      if (all_done) break;
      if (!progress) fail("deadlock: lanes wait at a warp intrinsic that others never reach", -1);
    }
    g_block = nullptr;
  }
}

inline unsigned char* smem() { return g_smem.data(); }

}  // namespace sim

#define threadIdx (dim3s{unsigned(sim::g_cur->tid), 0, 0})
#define blockIdx (sim::g_block->bidx)
#define blockDim (sim::g_block->bdim)
#define gridDim (sim::g_block->gdim)

template <class T>
inline unsigned long long sim_bits(T v) {
  unsigned long long b = 0;
  static_assert(sizeof(T) <= 8);
  std::memcpy(&b, &v, sizeof(T));
  return b;
}
template <class T>
inline T sim_from(unsigned long long b) {
  T v;
  std::memcpy(&v, &b, sizeof(T));
  return v;
}
#define __shfl_sync(mask, v, src) sim_shfl(sim::kShflIdx, __LINE__, mask, v, src)
#define __shfl_xor_sync(mask, v, s) sim_shfl(sim::kShflXor, __LINE__, mask, v, s)
#define __shfl_up_sync(mask, v, s) sim_shfl(sim::kShflUp, __LINE__, mask, v, s)
#define __ballot_sync(mask, p) unsigned(sim::rendezvous(sim::kBallot, __LINE__, (p) ? 1 : 0, 0))
#define __syncwarp(...) sim::rendezvous(sim::kSync, __LINE__, 0, 0)
template <class T>
inline T sim_shfl(int kind, int site, unsigned mask, T v, int a) {
  if (mask != 0xffffffffu) sim::fail("partial shuffle mask", site);
  return sim_from<T>(sim::rendezvous(kind, site, sim_bits(v), unsigned(a)));
}
inline int __ffs(unsigned x) { return x ? __builtin_ctz(x) + 1 : 0; }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
template <class A, class B>
inline auto min(A a, B b) { using C = std::common_type_t<A, B>; return C(a) < C(b) ? C(a) : C(b); }
template <class A, class B>
inline auto max(A a, B b) { using C = std::common_type_t<A, B>; return C(a) < C(b) ? C(b) : C(a); }
using std::sqrt;
