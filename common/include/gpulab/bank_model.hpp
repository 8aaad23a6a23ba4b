// A CPU model of one warp's shared-memory request: 32 banks of 4 bytes. A word read by many lanes
// is broadcast for free; distinct words in one bank are serialised, one wavefront each.
// 64-bit accesses are served in 2 phases of 16 lanes and 128-bit in 4 phases of 8 lanes, each
// phase judged on its own. This is seed 000 §3's b x M/b bank matrix, with the broadcast rule
// the seed's footnote 3 leaves out.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpulab {

inline constexpr int kWarpSize = 32;
inline constexpr int kBanks = 32;
inline constexpr int kBankWidthBytes = 4;

struct WarpAccess {
  std::array<std::optional<std::uint32_t>, kWarpSize> byte_address{};  // nullopt: lane inactive
  int width_bytes = 4;  // 1, 2, 4, 8 or 16

  // Lane i reads 32-bit word index(i); `active` lanes only (default: all 32).
  template <class IndexOfLane>
  static WarpAccess words(IndexOfLane index, int active = kWarpSize, int width_bytes = 4) {
    WarpAccess a;
    a.width_bytes = width_bytes;
    for (int lane = 0; lane < active; ++lane)
      a.byte_address[lane] = static_cast<std::uint32_t>(index(lane)) * static_cast<std::uint32_t>(width_bytes);
    return a;
  }
};

struct BankReport {
  int wavefronts = 0;        // what the hardware needs
  int ideal_wavefronts = 0;  // what the same request needs without conflicts (one per phase used)
  int max_way = 0;           // worst n-way conflict: distinct words in the busiest bank of a phase
  int excess() const { return wavefronts - ideal_wavefronts; }
};

BankReport analyze_bank_conflicts(const WarpAccess& access);

// One warp request of a kernel's shared-memory access pattern, named for tables and drawings
// ("up-sweep stride 4", "offset step j=0"): a lab's bank model is a list of these per kernel.
struct NamedRequest {
  std::string step;
  WarpAccess access;
};

// The requests of one kernel (or one step of it) added up.
struct RequestSummary {
  int requests = 0;
  long wavefronts = 0;
  long ideal_wavefronts = 0;
  int max_way = 0;       // worst n-way conflict of any request
  int worst_excess = 0;  // most excess wavefronts of one request
  long excess() const { return wavefronts - ideal_wavefronts; }
};

RequestSummary summarize(const std::vector<NamedRequest>& requests);

// Draws the request as the bank matrix: one row per bank, one column per word row
// (word / 32), each cell the lanes that touch it; the busiest bank is marked.
std::string draw_bank_matrix(const WarpAccess& access, int max_columns = 8);

}  // namespace gpulab
