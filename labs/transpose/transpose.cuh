// The transpose lab's interface: what labs/transpose/transpose.cu (yours) and
// solutions/transpose/transpose.cu (the reference) implement, and lab.cu calls. Do not edit.
//
// Every function works on a rows x cols matrix of float stored row-major on the device:
//   in[r * cols + c]  for 0 <= r < rows, 0 <= c < cols.
// The transposing stages write out = in^T, a cols x rows matrix, row-major:
//   out[c * rows + r] = in[r * cols + c].
// The two copy stages write out[i] = in[i] (the same rows * cols floats, not transposed): they
// are the bandwidth roof the other stages are measured against.
//
// Any rows and cols >= 1 must work, not only multiples of 32 (1 x n, n x 1, 31 x 33, 1000 x 999).
// Enqueue the work on the default stream and return; the harness synchronises and checks.
// No host <-> device copies: in and out are already on the device, out is poisoned.
#pragma once
#include <cstddef>

#include "gpulab/math.hpp"

namespace transpose {

// gpulab::ceil_div(a, b) = ceil(a / b), on the host and in kernels (gpulab/math.hpp). It stays in
// namespace gpulab: this header declares in namespace transpose only kTile, kBlockRows and the
// stage functions below, so a helper of your own (ceil_div, kWarp, ...) never clashes with it.

// The tile every shared-memory stage works on (seed 000 §3: b x b with b = w = 32 banks) and the
// thread-block shape the handout assumes: 32 x 8 threads, each thread moving 32 / 8 = 4 elements.
inline constexpr int kTile = 32;
inline constexpr int kBlockRows = 8;

// 1. copy: global to global, as fast as the GPU can (128-bit loads where they pay).
void copy(const float* in, float* out, std::size_t rows, std::size_t cols);
// 2. copy-shared: every 32 x 32 tile goes through shared memory on its way (not transposed).
void copy_shared(const float* in, float* out, std::size_t rows, std::size_t cols);
// 3. naive: one thread per element, reads along rows (coalesced), writes along columns.
void naive(const float* in, float* out, std::size_t rows, std::size_t cols);
// 4. tiled: through a 32 x 32 shared tile; both global accesses coalesced, the tile's column
//    reads conflict 32-way.
void tiled(const float* in, float* out, std::size_t rows, std::size_t cols);
// 5. padded: a 32 x 33 tile; no bank conflicts.
void padded(const float* in, float* out, std::size_t rows, std::size_t cols);
// 6. swizzled: a 32 x 32 tile whose columns are permuted per row; no bank conflicts, no padding.
void swizzled(const float* in, float* out, std::size_t rows, std::size_t cols);
// 7. in-place-sweep: load a 32 x 32 tile, transpose it in place in shared memory with seed 000's
//    diagonal sweep (Appendix B, Algorithm 2), store it to the transposed tile position.
void in_place_sweep(const float* in, float* out, std::size_t rows, std::size_t cols);
// 8. in-place-sweep-rect: the same for a 64 x 32 tile (m = 2n): two 32 x 32 squares, each swept
//    in place, read back by index arithmetic (seed 000 §3 and Appendix B).
void in_place_sweep_rect(const float* in, float* out, std::size_t rows, std::size_t cols);

}  // namespace transpose
