// The scan lab's interface: what your files (labs/scan/scan_basic.cu, scan_tiled.cu, colored.cu,
// compact.cu) implement and the harness (lab.cu) calls. Do not edit.
//
// Exclusive scan of int32 with +:  out[0] = 0,  out[i] = in[0] + ... + in[i-1].
// Sums wrap modulo 2^32 the way the GPU's integer adder does (on the CPU add in unsigned: signed
// overflow is undefined behaviour in C++). Every n >= 0 must work, not only powers of two; n == 0
// means "do nothing".
//
// GPU functions receive device pointers, enqueue their kernels on the default stream and return:
// the harness synchronises, times and checks. They must not allocate device memory, copy between
// host and device, or synchronise: scratch memory comes from the ScanWorkspace, which the harness
// allocates before timing starts (a cudaMalloc inside the timed region would dominate small n).
// The outputs are poisoned before every run, so every output element must be written.
#pragma once
#include <cstddef>
#include <cstdint>

#include "gpulab/math.hpp"
#include "gpulab/scratch.hpp"

namespace scan {

// ---- small helpers (usable on the host and in kernels): gpulab/math.hpp ----------------------
//
//   gpulab::ceil_div(a, b)   ceil(a / b)
//   gpulab::ceil_log2(n)     smallest k with 2^k >= n (0 for n <= 1)
//   gpulab::round_up(a, m)   the next multiple of m
// They stay in namespace gpulab: this header declares in namespace scan only the lab's own names
// below (the stage functions, ScanConfig, ScanWorkspace, scan_workspace_ints, the k... contract
// constants, alpha_matrix_shared_bytes, the cub_/thrust_ baselines), so a helper of your own
// (ceil_div, round_up, kWarp, ...) never clashes with it. Call gpulab::ceil_div, or bring it into
// your own file with a using-declaration.

// ---- the knobs the harness passes (from --param key=value; validated before you see them) ----

struct ScanConfig {
  int block = 256;  // "block": threads per block, a power of two in [32, 1024]
  int alpha = 8;    // "alpha": rows of the alpha x b matrix (alpha-matrix), 1..32
  int colors = 8;   // "colors": number of colors d (colored-*), 1..16
};

// Device scratch memory for one stage, allocated by the harness outside the timed region.
// It holds scan_workspace_ints(n) ints: enough for ping-pong buffers (naive), a power-of-two
// copy (work-efficient), block sums (shared), tile sums and look-back state (the tiled scans)
// and flags + indices (compact). Take pieces of it with take(); the harness calls reset()
// before every run, so a run may take the same pieces again.
struct ScanWorkspace : gpulab::Scratch {
  ScanConfig config;
  int multiprocessors = 1;  // SMs of the device (for sizing persistent grids)

  // The next `count` ints of scratch, 16-byte aligned (so int4 loads work on them); a
  // std::length_error when the workspace (4n + 2^20 ints) has too few left.
  int* take(std::size_t count) { return Scratch::take<int>(count); }
};

// The size the harness allocates: 4n + 2^20 ints.
constexpr std::size_t scan_workspace_ints(std::size_t n) { return 4 * n + (std::size_t{1} << 20); }

// ---- contracts the bank-conflict model and the alpha sweep rely on ----------------------------

// Colored prefix sums (seed 000 §4): one warp is one processor of the model. It walks its tile in
// pages of kColoredPage = w^2 = 1024 elements; thread t owns the 32 consecutive elements
// [32t, 32t + 32) of a page. Per page, thread t's per-color sums live in shared memory at
//   counts[c * 32 + t]          (color c, thread t: thread t owns bank t).
// The "offset step" turns them into exclusive prefixes over t, one color per thread:
//   colored-direct:         thread c walks counts[c * 32 + j] for j = 0..31 (d threads, one bank)
//   colored-conflict-free:  transpose into trans[t * kColoredTransposeStride + c], thread c walks
//                           trans[j * kColoredTransposeStride + c], transpose back.
inline constexpr int kColoredPage = 1024;
inline constexpr int kMaxColors = 16;
inline constexpr int kColoredTransposeStride = kMaxColors + 1;  // odd: rows start in distinct banks

// alpha-matrix (seed 004 §6, Alg. 8): one warp is one multiprocessor of the AGPU model with
// b = 32 cores; each warp owns an alpha x (b + 1) int matrix in shared memory; a block holds
// kAlphaWarpsPerBlock warps, so a block needs kAlphaWarpsPerBlock * alpha * 33 * 4 bytes.
inline constexpr int kAlphaColumns = 32;  // b
inline constexpr int kAlphaWarpsPerBlock = 4;
constexpr std::size_t alpha_matrix_shared_bytes(int alpha) {
  return std::size_t{kAlphaWarpsPerBlock} * static_cast<std::size_t>(alpha) * (kAlphaColumns + 1) * sizeof(int);
}

// ---- 1. CPU (host pointers) -------------------------------------------------------------------

void exclusive_scan_cpu(const int* in, int* out, std::size_t n);
// Stream compaction: copy the non-zero elements of in, in order, to out; return how many.
std::size_t compact_cpu(const int* in, int* out, std::size_t n);            // one pass, no scan
std::size_t compact_cpu_with_scan(const int* in, int* out, std::size_t n);  // map, scan, scatter

// ---- 2.-8., 10. GPU scans (device pointers) ------------------------------------------------------

void exclusive_scan_naive(const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws);
void exclusive_scan_work_efficient(const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws);
void exclusive_scan_work_efficient_compact_threads(const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws);
void exclusive_scan_shared(const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws);
void exclusive_scan_shared_conflict_free(const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws);
void exclusive_scan_three_round(const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws);
void exclusive_scan_alpha_matrix(const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws);
void exclusive_scan_single_pass(const int* d_in, int* d_out, std::size_t n, ScanWorkspace& ws);

// ---- 8. colored prefix sums ---------------------------------------------------------------------
// d = ws.config.colors colors; element i has value d_values[i] and color d_colors[i] in [0, d).
// out[i] = sum of d_values[j] over j < i with d_colors[j] == d_colors[i]   (exclusive, per color).
void colored_exclusive_scan_direct(const int* d_values, const std::uint8_t* d_colors, int* d_out, std::size_t n,
                                   ScanWorkspace& ws);
void colored_exclusive_scan_conflict_free(const int* d_values, const std::uint8_t* d_colors, int* d_out,
                                          std::size_t n, ScanWorkspace& ws);

// ---- 9. stream compaction on the GPU ------------------------------------------------------------
// Writes the non-zero elements of d_in, in order, to d_out[0 .. count) and count to *d_count
// (one int on the device). d_out has room for n elements; what lies beyond count is not checked.
void compact(const int* d_in, int* d_out, int* d_count, std::size_t n, ScanWorkspace& ws);

// ---- baselines (provided, scan_cub.cu): CCCL, the library the scans are measured against -------

std::size_t cub_exclusive_sum_bytes(std::size_t n);   // cub::DeviceScan::ExclusiveSum's temporary storage
void cub_exclusive_sum(void* temp, std::size_t temp_bytes, const int* d_in, int* d_out, std::size_t n);
void thrust_exclusive_scan(const int* d_in, int* d_out, std::size_t n);   // allocates inside the call
std::size_t cub_select_nonzero_bytes(std::size_t n);  // cub::DeviceSelect::If's temporary storage
void cub_select_nonzero(void* temp, std::size_t temp_bytes, const int* d_in, int* d_out, int* d_count, std::size_t n);

}  // namespace scan
