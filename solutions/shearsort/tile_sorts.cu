// Reference of labs/shearsort/tile_sorts.cu: the two CPU stages and the tile stages.
//   cpu                     sort_cpu          std::stable_sort of (key, value) by key (the oracle)
//   cpu-shear               tile_shear_cpu    ShearSort on every tile, on the host (000 §5, 001)
// The GPU tile stages, every 1024-key tile of the input sorted by one warp:
//   tile-bitonic            BitonicShared     the shared-memory network ShearSort replaces (000 §5)
//   tile-shear-naive        ShearNaive        columns sorted in place: 32-way conflicts (000 §3)
//   tile-shear-transpose    ShearTranspose    transpose / sort rows / transpose back (000 §5, App. B)
//   tile-shear-registers    ShearRegisters    as transpose, rows in registers (000 §6.3)
//   tile-shear-padded       ShearPadded       a 32 x 33 tile: no transposes
// The algorithms themselves are in shear_device.cuh (the merge stages use the same kernels).
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "shear_device.cuh"
#include "shearsort.cuh"

namespace shearsort {

// ---- 1.-2. the CPU stages ----------------------------------------------------------------------------------

void sort_cpu(const std::int32_t* keys_in, const std::uint32_t* values_in, std::int32_t* keys_out,
              std::uint32_t* values_out, std::size_t n) {
  if (values_in == nullptr) {
    std::copy(keys_in, keys_in + n, keys_out);
    std::stable_sort(keys_out, keys_out + n);
    return;
  }
  // Sort the positions by key, stably: equal keys keep their input order, and each value follows.
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return keys_in[a] < keys_in[b]; });
  for (std::size_t i = 0; i < n; ++i) {
    keys_out[i] = keys_in[order[i]];
    values_out[i] = values_in[order[i]];
  }
}

// One tile in bank-matrix order: key a = 32 c + i is column c, row i. log2 w rounds of (columns:
// even ascending, odd descending; rows ascending), then the final ascending column phase the seeds
// leave out (seed 000 §5, seed 001).
void tile_shear_cpu(const std::int32_t* in, std::int32_t* out, std::size_t n) {
  std::vector<std::int32_t> tile(kTileKeys), line(kTileSide);
  auto column_phase = [&](bool alternate) {
    for (int c = 0; c < kTileSide; ++c) {
      const auto first = tile.begin() + c * kTileSide;
      if (alternate && (c & 1)) std::sort(first, first + kTileSide, std::greater<>());
      else std::sort(first, first + kTileSide);
    }
  };
  auto row_phase = [&] {
    for (int r = 0; r < kTileSide; ++r) {
      for (int j = 0; j < kTileSide; ++j) line[j] = tile[r + kTileSide * j];
      std::sort(line.begin(), line.end());
      for (int j = 0; j < kTileSide; ++j) tile[r + kTileSide * j] = line[j];
    }
  };
  for (std::size_t base = 0; base < n; base += kTileKeys) {
    const std::size_t valid = std::min<std::size_t>(kTileKeys, n - base);
    for (std::size_t a = 0; a < std::size_t(kTileKeys); ++a) tile[a] = a < valid ? in[base + a] : INT_MAX;
    for (int round = 0; round < kShearRounds; ++round) {
      column_phase(true);
      row_phase();
    }
    column_phase(false);
    std::copy(tile.begin(), tile.begin() + static_cast<long>(valid), out + base);
  }
}

// ---- 3.-7. the tile stages ---------------------------------------------------------------------------------

namespace {

template <class Algo>
void sort_tiles_with(const std::int32_t* keys_in, const std::uint32_t* values_in, std::int32_t* keys_out,
                     std::uint32_t* values_out, std::size_t n) {
  if (values_in == nullptr) {
    device::launch_tile_sort<Algo>(device::KeysIO{keys_in, keys_out}, n);
  } else {
    device::launch_tile_sort<Algo>(device::PairsIO{keys_in, values_in, keys_out, values_out}, n);
  }
}

}  // namespace

void sort_tiles(TileVariant variant, const std::int32_t* d_keys_in, const std::uint32_t* d_values_in,
                std::int32_t* d_keys_out, std::uint32_t* d_values_out, std::size_t n) {
  if ((d_values_in == nullptr) != (d_values_out == nullptr))
    throw std::invalid_argument("sort_tiles: values in and values out must both be given or both be null");
  switch (variant) {
    case TileVariant::bitonic:
      return sort_tiles_with<device::BitonicShared>(d_keys_in, d_values_in, d_keys_out, d_values_out, n);
    case TileVariant::shear_naive:
      return sort_tiles_with<device::ShearNaive>(d_keys_in, d_values_in, d_keys_out, d_values_out, n);
    case TileVariant::shear_transpose:
      return sort_tiles_with<device::ShearTranspose>(d_keys_in, d_values_in, d_keys_out, d_values_out, n);
    case TileVariant::shear_registers:
      return sort_tiles_with<device::ShearRegisters>(d_keys_in, d_values_in, d_keys_out, d_values_out, n);
    case TileVariant::shear_padded:
      return sort_tiles_with<device::ShearPadded>(d_keys_in, d_values_in, d_keys_out, d_values_out, n);
  }
  throw std::invalid_argument("sort_tiles: unknown tile variant");
}

void tile_bitonic(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, ShearWorkspace&) {
  sort_tiles(TileVariant::bitonic, d_in, nullptr, d_out, nullptr, n);
}
void tile_shear_naive(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, ShearWorkspace&) {
  sort_tiles(TileVariant::shear_naive, d_in, nullptr, d_out, nullptr, n);
}
void tile_shear_transpose(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, ShearWorkspace&) {
  sort_tiles(TileVariant::shear_transpose, d_in, nullptr, d_out, nullptr, n);
}
void tile_shear_registers(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, ShearWorkspace&) {
  sort_tiles(TileVariant::shear_registers, d_in, nullptr, d_out, nullptr, n);
}
void tile_shear_padded(const std::int32_t* d_in, std::int32_t* d_out, std::size_t n, ShearWorkspace&) {
  sort_tiles(TileVariant::shear_padded, d_in, nullptr, d_out, nullptr, n);
}

}  // namespace shearsort
