// The kernel variants behind labs/transpose/results/variants.txt and slides/img/transpose-variants.png:
// one self-contained benchmark (CUDA runtime only), kept next to the reference because it contains
// full transposes. It is not part of the build. On a GPU machine:
//   nvcc -std=c++17 -O3 -arch=sm_90 -o variants solutions/transpose/variants.cu && ./variants [rows cols]
// v1 = loads and shared stores interleaved (the first reference), v2 = loads staged in registers,
// BR = thread rows per CTA (32 x BR threads), S = 32 x 32 tiles stacked per CTA, v3 = v2 with the
// CTA order swapped (blockIdx.x walks strips, so concurrent CTAs write neighbouring pieces of the
// same rows of out). Every variant is checked against a naive transpose ("ok").
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cstdint>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)
constexpr int T = 32;
struct Plain { static constexpr int W = T; __device__ static int at(int r, int c) { return r * W + c; } };
struct Padded { static constexpr int W = T + 1; __device__ static int at(int r, int c) { return r * W + c; } };
struct Swz { static constexpr int W = T; __device__ static int at(int r, int c) { return r * W + (c ^ r); } };

// V1: as in the reference (branch per element, load then store)
template <class L, int BR>
__global__ void v1(const float* __restrict__ in, float* __restrict__ out, size_t rows, size_t cols) {
  __shared__ float tile[T * L::W];
  const size_t c0 = size_t{blockIdx.x} * T;
  for (size_t tr = blockIdx.y; tr * T < rows; tr += gridDim.y) {
    const size_t r0 = tr * T;
#pragma unroll
    for (int k = 0; k < T / BR; ++k) { int y = threadIdx.y + k * BR;
      if (r0 + y < rows && c0 + threadIdx.x < cols) tile[L::at(y, threadIdx.x)] = in[(r0 + y) * cols + c0 + threadIdx.x]; }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < T / BR; ++k) { int y = threadIdx.y + k * BR;
      if (c0 + y < cols && r0 + threadIdx.x < rows) out[(c0 + y) * rows + r0 + threadIdx.x] = tile[L::at(threadIdx.x, y)]; }
    __syncthreads();
  }
}
// V2: loads staged in registers; S tiles stacked vertically per CTA; fast path for full blocks
template <class L, int BR, int S>
__global__ void v2(const float* __restrict__ in, float* __restrict__ out, size_t rows, size_t cols) {
  __shared__ float tile[S][T * L::W];
  constexpr int K = T / BR;
  const size_t c0 = size_t{blockIdx.x} * T;
  for (size_t tr = blockIdx.y; tr * T * S < rows; tr += gridDim.y) {
    const size_t r0 = tr * T * S;
    float v[S][K];
    const bool full = r0 + T * S <= rows && c0 + T <= cols;
    if (full) {
#pragma unroll
      for (int s = 0; s < S; ++s)
#pragma unroll
        for (int k = 0; k < K; ++k) v[s][k] = in[(r0 + s * T + threadIdx.y + k * BR) * cols + c0 + threadIdx.x];
    } else {
#pragma unroll
      for (int s = 0; s < S; ++s)
#pragma unroll
        for (int k = 0; k < K; ++k) { size_t r = r0 + s * T + threadIdx.y + k * BR;
          v[s][k] = (r < rows && c0 + threadIdx.x < cols) ? in[r * cols + c0 + threadIdx.x] : 0.0f; }
    }
#pragma unroll
    for (int s = 0; s < S; ++s)
#pragma unroll
      for (int k = 0; k < K; ++k) tile[s][L::at(threadIdx.y + k * BR, threadIdx.x)] = v[s][k];
    __syncthreads();
    if (full) {
#pragma unroll
      for (int s = 0; s < S; ++s)
#pragma unroll
        for (int k = 0; k < K; ++k) { int y = threadIdx.y + k * BR;
          out[(c0 + y) * rows + r0 + s * T + threadIdx.x] = tile[s][L::at(threadIdx.x, y)]; }
    } else {
#pragma unroll
      for (int s = 0; s < S; ++s)
#pragma unroll
        for (int k = 0; k < K; ++k) { int y = threadIdx.y + k * BR; size_t oc = r0 + s * T + threadIdx.x;
          if (c0 + y < cols && oc < rows) out[(c0 + y) * rows + oc] = tile[s][L::at(threadIdx.x, y)]; }
    }
    __syncthreads();
  }
}

// V3: as v2 Padded/Swz S, BR=8 but blockIdx.x walks strips (rows of in), blockIdx.y tile columns:
// concurrently running CTAs write neighbouring pieces of the same rows of out.
template <class L, int BR, int S>
__global__ void v3(const float* __restrict__ in, float* __restrict__ out, size_t rows, size_t cols) {
  __shared__ float tile[S][T * L::W];
  constexpr int K = T / BR;
  const size_t c0 = size_t{blockIdx.y} * T;
  const size_t r0 = size_t{blockIdx.x} * T * S;
  float v[S][K];
#pragma unroll
  for (int s = 0; s < S; ++s)
#pragma unroll
    for (int k = 0; k < K; ++k) { size_t r = r0 + s * T + threadIdx.y + k * BR;
      v[s][k] = (r < rows && c0 + threadIdx.x < cols) ? in[r * cols + c0 + threadIdx.x] : 0.0f; }
#pragma unroll
  for (int s = 0; s < S; ++s)
#pragma unroll
    for (int k = 0; k < K; ++k) tile[s][L::at(threadIdx.y + k * BR, threadIdx.x)] = v[s][k];
  __syncthreads();
#pragma unroll
  for (int s = 0; s < S; ++s)
#pragma unroll
    for (int k = 0; k < K; ++k) { int y = threadIdx.y + k * BR; size_t oc = r0 + s * T + threadIdx.x;
      if (c0 + y < cols && oc < rows) out[(c0 + y) * rows + oc] = tile[s][L::at(threadIdx.x, y)]; }
}
// Sweep, staged, S squares stacked
template <int BR, int S>
__global__ void sweep(const float* __restrict__ in, float* __restrict__ out, size_t rows, size_t cols) {
  __shared__ float tile[S][T * T];
  constexpr int K = T / BR;
  const size_t c0 = size_t{blockIdx.x} * T;
  for (size_t tr = blockIdx.y; tr * T * S < rows; tr += gridDim.y) {
    const size_t r0 = tr * T * S;
    float v[S][K];
#pragma unroll
    for (int s = 0; s < S; ++s)
#pragma unroll
      for (int k = 0; k < K; ++k) { size_t r = r0 + s * T + threadIdx.y + k * BR;
        v[s][k] = (r < rows && c0 + threadIdx.x < cols) ? in[r * cols + c0 + threadIdx.x] : 0.0f; }
#pragma unroll
    for (int s = 0; s < S; ++s)
#pragma unroll
      for (int k = 0; k < K; ++k) tile[s][(threadIdx.y + k * BR) * T + threadIdx.x] = v[s][k];
    __syncthreads();
#pragma unroll
    for (int s = 0; s < S; ++s)
      for (int i = 1 + threadIdx.y; i < T; i += BR) { int row = threadIdx.x + i; if (row < T) {
        float a = tile[s][threadIdx.x * T + row], b = tile[s][row * T + threadIdx.x];
        tile[s][row * T + threadIdx.x] = a; tile[s][threadIdx.x * T + row] = b; } }
    __syncthreads();
#pragma unroll
    for (int s = 0; s < S; ++s)
#pragma unroll
      for (int k = 0; k < K; ++k) { int y = threadIdx.y + k * BR; size_t oc = r0 + s * T + threadIdx.x;
        if (c0 + y < cols && oc < rows) out[(c0 + y) * rows + oc] = tile[s][y * T + threadIdx.x]; }
    __syncthreads();
  }
}
__global__ void copy4(const float4* __restrict__ in, float4* __restrict__ out, size_t n) {
  size_t s = size_t{gridDim.x} * blockDim.x;
  for (size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += s) out[i] = in[i]; }
__global__ void naive_t(const float* in, float* out, size_t rows, size_t cols) {
  size_t c = size_t{blockIdx.x} * 32 + threadIdx.x; size_t r = size_t{blockIdx.y} * 8 + threadIdx.y;
  if (r < rows && c < cols) out[c * rows + r] = in[r * cols + c]; }
__global__ void count_diff(const float* a, const float* b, size_t n, unsigned long long* bad) {
  size_t s = size_t{gridDim.x} * blockDim.x; unsigned long long local = 0;
  for (size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += s) local += a[i] != b[i];
  if (local) atomicAdd(bad, local); }
__global__ void fill(float* p, size_t n) { size_t s = size_t{gridDim.x} * blockDim.x;
  for (size_t i = size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += s) p[i] = (float)(i % 16777213); }

size_t R = 8192, C = 8192;
float *din, *dout, *dref; void* flushbuf; size_t flushbytes; unsigned long long* dbad;
template <class F> void bench(const char* name, F launch, bool check = true, double bytes = 0) {
  if (!bytes) bytes = 2.0 * R * C * 4;
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> ms;
  for (int rep = 0; rep < 13; ++rep) {
    CK(cudaMemsetAsync(dout, 0xA5, R * C * 4));
    CK(cudaMemsetAsync(flushbuf, 0, flushbytes));
    cudaEventRecord(a); launch(); cudaEventRecord(b); CK(cudaEventSynchronize(b));
    float t; cudaEventElapsedTime(&t, a, b); if (rep >= 3) ms.push_back(t);
  }
  CK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  unsigned long long bad = 0;
  if (check) { CK(cudaMemset(dbad, 0, 8)); count_diff<<<1024, 256>>>(dout, dref, R * C, dbad); CK(cudaMemcpy(&bad, dbad, 8, cudaMemcpyDeviceToHost)); }
  printf("%-34s %8.4f ms %8.1f GB/s %s\n", name, ms[ms.size() / 2], bytes / (ms[ms.size() / 2] * 1e-3) / 1e9, check ? (bad ? "WRONG" : "ok") : "");
}
int main(int argc, char** argv) {
  if (argc > 2) { R = atoll(argv[1]); C = atoll(argv[2]); }
  int l2; CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0)); flushbytes = 2ull * l2;
  CK(cudaMalloc(&din, R * C * 4)); CK(cudaMalloc(&dout, R * C * 4)); CK(cudaMalloc(&dref, R * C * 4));
  CK(cudaMalloc(&flushbuf, flushbytes)); CK(cudaMalloc(&dbad, 8));
  fill<<<1024, 256>>>(din, R * C);
  naive_t<<<dim3((C + 31) / 32, (R + 7) / 8), dim3(32, 8)>>>(din, dref, R, C); CK(cudaDeviceSynchronize());
  printf("%zu x %zu\n", R, C);
  bench("copy float4", [&] { copy4<<<(R * C / 4 + 255) / 256, 256>>>((float4*)din, (float4*)dout, R * C / 4); }, false);
  bench("memcpy", [&] { cudaMemcpyAsync(dout, din, R * C * 4, cudaMemcpyDeviceToDevice); }, false);
  auto g = [&](int S) { return dim3((C + 31) / 32, std::min<size_t>((R + 32 * S - 1) / (32 * S), 65535)); };
#define V1(L, BR) bench("v1 " #L " BR=" #BR, [&] { v1<L, BR><<<g(1), dim3(32, BR)>>>(din, dout, R, C); });
#define V2(L, BR, S) bench("v2 " #L " BR=" #BR " S=" #S, [&] { v2<L, BR, S><<<g(S), dim3(32, BR)>>>(din, dout, R, C); });
#define SW(BR, S) bench("sweep BR=" #BR " S=" #S, [&] { sweep<BR, S><<<g(S), dim3(32, BR)>>>(din, dout, R, C); });
  V1(Plain, 8) V1(Padded, 8) V1(Swz, 8)
  V2(Plain, 8, 1) V2(Padded, 8, 1) V2(Swz, 8, 1)
  V2(Padded, 4, 1) V2(Padded, 8, 2) V2(Swz, 8, 2) V2(Plain, 8, 2) V2(Padded, 8, 4)
  SW(8, 1) SW(8, 2)
#define V3(L, BR, S) bench("v3 (strips along x) " #L " S=" #S, [&] { v3<L, BR, S><<<dim3((R + 32 * S - 1) / (32 * S), (C + 31) / 32), dim3(32, BR)>>>(din, dout, R, C); });
  V3(Padded, 8, 1) V3(Padded, 8, 2) V3(Swz, 8, 2) V3(Padded, 8, 4)
  return 0;
}
