// Instructors only: a host emulation of the few CUDA features the reduction reference uses, to
// check the kernels on a machine without a GPU (run.sh). Each block's threads are std::threads
// that meet at real barriers (__syncthreads, __syncwarp; a shuffle is a store, a warp barrier and
// a load), and blocks run one after another. It checks the index arithmetic, the order of every
// combine, the barriers' placement between phases and the launch counts; it says nothing about
// coalescing, bank conflicts, the memory model or speed: the GPU check (../reduction_gpu_check.sh) does.
#pragma once
#include <cuda_runtime.h>
#include <barrier>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>
#include <cstdint>
#define __CUDACC__ 1
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
namespace emu {
struct D3 { unsigned x = 1, y = 1, z = 1; };
inline thread_local D3 tIdx, bIdx, bDim, gDim;
struct Block {
  std::unique_ptr<std::barrier<>> bar;
  std::vector<std::unique_ptr<std::barrier<>>> warp_bar;
  std::vector<std::uint32_t> slots;
};
inline thread_local Block* cur = nullptr;
inline std::vector<unsigned char> dyn_smem(1 << 22);
struct Cfg {
  unsigned g, b; std::size_t s;
  Cfg(long long g_, long long b_, std::size_t s_ = 0) : g(unsigned(g_)), b(unsigned(b_)), s(s_) {}
};
inline long launches = 0;
template <class K, class... A>
void launch(Cfg c, K kernel, A... args) {
  ++launches;
  for (unsigned blk = 0; blk < c.g; ++blk) {
    Block B;
    B.bar = std::make_unique<std::barrier<>>(c.b);
    for (unsigned w = 0; w < c.b / 32; ++w) B.warp_bar.push_back(std::make_unique<std::barrier<>>(32));
    B.slots.assign(c.b, 0);
    std::memset(dyn_smem.data(), 0xCD, dyn_smem.size());
    std::vector<std::thread> th;
    for (unsigned t = 0; t < c.b; ++t)
      th.emplace_back([&, t] {
        tIdx = {t, 1, 1}; bIdx = {blk, 1, 1}; bDim = {c.b, 1, 1}; gDim = {c.g, 1, 1}; cur = &B;
        kernel(args...);
      });
    for (auto& x : th) x.join();
  }
}
}  // namespace emu
#define threadIdx (::emu::tIdx)
#define blockIdx (::emu::bIdx)
#define blockDim (::emu::bDim)
#define gridDim (::emu::gDim)
inline void __syncthreads() { emu::cur->bar->arrive_and_wait(); }
inline void __syncwarp(unsigned = 0xFFFFFFFFu) { emu::cur->warp_bar[threadIdx.x / 32]->arrive_and_wait(); }
inline std::uint32_t __shfl_down_sync(unsigned, std::uint32_t v, int d) {
  const unsigned t = threadIdx.x, lane = t % 32;
  emu::cur->slots[t] = v;
  __syncwarp();
  const std::uint32_t r = lane + d < 32 ? emu::cur->slots[t + d] : v;
  __syncwarp();
  return r;
}
inline uint4 __ldg(const uint4* p) { return *p; }
#define cudaFuncSetAttribute(...) cudaSuccess
#define cudaGetLastError() cudaSuccess
