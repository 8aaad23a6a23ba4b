// Instructors only (left out of the handout, like solutions/). The bench that chose the reference's single-pass defaults (not built by CMake; gpu_measure.sh
// compiles and runs it): variants of the reference's single-pass and three-round kernels against
// CUB at n = 2^28, the L2 flushed before every repetition, each output compared with CUB's.
#include "../../solutions/scan/scan_tiled.cu"

#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

using namespace scan;

__global__ void fill(int* a, std::size_t n) {
  for (std::size_t i = blockIdx.x * (std::size_t)blockDim.x + threadIdx.x; i < n; i += (std::size_t)gridDim.x * blockDim.x)
    a[i] = (int)((i * 2654435761u) >> 20) % 2001 - 1000;
}
__global__ void count_diff(const int* a, const int* b, std::size_t n, unsigned long long* c) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * (std::size_t)blockDim.x + threadIdx.x; i < n; i += (std::size_t)gridDim.x * blockDim.x)
    local += a[i] != b[i];
  if (local) atomicAdd(c, local);
}

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::stoull(argv[1]) : (std::size_t{1} << 28);
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  int l2 = 0;
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0);
  int *in, *out, *ref, *temp, *flush;
  unsigned long long* diff;
  const std::size_t temp_ints = scan_workspace_ints(n);
  cudaMalloc(&in, n * 4); cudaMalloc(&out, n * 4); cudaMalloc(&ref, n * 4); cudaMalloc(&temp, temp_ints * 4);
  cudaMalloc(&flush, 2 * (std::size_t)l2); cudaMalloc(&diff, 8);
  fill<<<1024, 256>>>(in, n);
  std::size_t cub_bytes = 0;
  cub::DeviceScan::ExclusiveSum(nullptr, cub_bytes, in, ref, (int)n);
  void* cub_temp; cudaMalloc(&cub_temp, cub_bytes);
  ScanWorkspace ws; ws.temp = temp; ws.temp_ints = temp_ints; ws.multiprocessors = sms;
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  auto time = [&](const std::function<void()>& f) {
    std::vector<float> t;
    for (int r = 0; r < 12; ++r) {
      cudaMemsetAsync(flush, r, 2 * (std::size_t)l2);
      cudaEventRecord(e0); ws.reset(); f(); cudaEventRecord(e1); cudaEventSynchronize(e1);
      float ms; cudaEventElapsedTime(&ms, e0, e1); if (r >= 2) t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return (double)t[t.size() / 2];
  };
  const double cub_ms = time([&] { cub::DeviceScan::ExclusiveSum(cub_temp, cub_bytes, in, ref, (int)n); });
  const double copy_ms = time([&] { cudaMemcpyAsync(out, in, n * 4, cudaMemcpyDeviceToDevice); });
  printf("n=%zu sms=%d cub %.4f ms (%.0f GB/s)  memcpy %.4f ms (%.0f GB/s)\n", n, sms, cub_ms, 8.0 * n / cub_ms / 1e6,
         copy_ms, 8.0 * n / copy_ms / 1e6);
  auto report = [&](const std::string& name, const std::function<void()>& f) {
    cudaMemset(out, 0xA5, n * 4);
    cudaMemset(diff, 0, 8);
    ws.reset(); f();
    count_diff<<<1024, 256>>>(out, ref, n, diff);
    unsigned long long d = 0; cudaMemcpy(&d, diff, 8, cudaMemcpyDeviceToHost);
    const double ms = time(f);
    cudaError_t err = cudaGetLastError();
    printf("%-44s %.4f ms  %6.0f GB/s  vs CUB %.3f  %s%s\n", name.c_str(), ms, 8.0 * n / ms / 1e6, cub_ms / ms,
           d ? "WRONG " : "", err ? cudaGetErrorString(err) : "");
  };
#define SP(B, V, K, D, S) report("single-pass B=" #B " V=" #V " backoff=" #K " delay=" #D " stream=" #S, \
    [&] { single_pass<B, V, TileOrder::block_index, K, D, S>(in, out, n, ws); })
  SP(128, 8, 0, 0, false); SP(128, 8, 0, 0, true); SP(128, 12, 0, 0, false); SP(128, 6, 0, 0, false);
  SP(128, 8, 0, 300, false); SP(128, 8, 0, 600, false); SP(128, 8, 0, 1000, false); SP(128, 8, 0, 1500, false);
  SP(128, 8, 300, 600, false); SP(128, 8, 300, 1000, false); SP(128, 8, 300, 1000, true);
  SP(128, 12, 0, 600, false); SP(128, 12, 0, 1000, false); SP(128, 12, 300, 1000, false);
  SP(128, 6, 0, 1000, false); SP(256, 8, 0, 1000, false); SP(64, 16, 0, 1000, false); SP(64, 12, 0, 600, false);
  report("single-pass atomic B=128 V=8", [&] { single_pass<128, 8, TileOrder::atomic_counter, 0, 0, false>(in, out, n, ws); });
#define TR(B, V) report("three-round B=" #B " V=" #V, [&] { three_round<B, V>(in, out, n, ws); })
  TR(256, 4); TR(512, 4); TR(512, 8);
  return 0;
}
