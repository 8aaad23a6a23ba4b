#include "gpulab/bank_model.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace gpulab {

namespace {

int lanes_per_phase(int width_bytes) {
  switch (width_bytes) {
    case 1: case 2: case 4: return 32;
    case 8: return 16;   // 64-bit: two half-warp phases
    case 16: return 8;   // 128-bit: four quarter-warp phases
    default: throw std::invalid_argument("bank model: access width must be 1, 2, 4, 8 or 16 bytes");
  }
}

// The 32-bit words a lane's access covers.
std::vector<std::uint32_t> words_of(std::uint32_t byte_address, int width_bytes) {
  std::vector<std::uint32_t> words;
  const std::uint32_t first = byte_address / kBankWidthBytes;
  const std::uint32_t last = (byte_address + std::max(width_bytes, 1) - 1) / kBankWidthBytes;
  for (std::uint32_t w = first; w <= last; ++w) words.push_back(w);
  return words;
}

// bank -> distinct words requested from it by lanes [begin, end)
std::map<int, std::set<std::uint32_t>> words_by_bank(const WarpAccess& a, int begin, int end) {
  std::map<int, std::set<std::uint32_t>> banks;
  for (int lane = begin; lane < end; ++lane) {
    if (!a.byte_address[lane]) continue;
    for (auto w : words_of(*a.byte_address[lane], a.width_bytes)) banks[w % kBanks].insert(w);
  }
  return banks;
}

}  // namespace

BankReport analyze_bank_conflicts(const WarpAccess& access) {
  const int per_phase = lanes_per_phase(access.width_bytes);
  BankReport report;
  for (int begin = 0; begin < kWarpSize; begin += per_phase) {
    const auto banks = words_by_bank(access, begin, begin + per_phase);
    if (banks.empty()) continue;
    int busiest = 0;
    for (const auto& [bank, words] : banks) busiest = std::max<int>(busiest, static_cast<int>(words.size()));
    // Each distinct word in the busiest bank costs one wavefront; lanes reading the same word share it.
    report.wavefronts += busiest;
    report.ideal_wavefronts += 1;
    report.max_way = std::max(report.max_way, busiest);
  }
  return report;
}

std::string draw_bank_matrix(const WarpAccess& access, int max_columns) {
  const auto report = analyze_bank_conflicts(access);
  // word row r = word / 32: column r of seed 000's b x M/b matrix (Fig. 1). A cell lists the lanes.
  std::map<std::uint32_t, std::map<int, std::vector<int>>> lanes_at;  // row -> bank -> lanes
  for (int lane = 0; lane < kWarpSize; ++lane) {
    if (!access.byte_address[lane]) continue;
    for (auto w : words_of(*access.byte_address[lane], access.width_bytes)) lanes_at[w / kBanks][w % kBanks].push_back(lane);
  }
  std::vector<std::uint32_t> rows;
  for (const auto& [row, _] : lanes_at) rows.push_back(row);
  const bool truncated = static_cast<int>(rows.size()) > max_columns;
  if (truncated) rows.resize(max_columns);

  auto cell_text = [](const std::vector<int>& lanes) {
    if (lanes.empty()) return std::string(".");
    std::ostringstream s;
    s << "L" << lanes.front();
    if (lanes.size() > 1) s << "+" << lanes.size() - 1;  // broadcast: several lanes, one word
    return s.str();
  };
  std::size_t width = 6;
  for (auto row : rows)
    for (const auto& [bank, lanes] : lanes_at[row]) width = std::max(width, cell_text(lanes).size() + 1);

  std::ostringstream out;
  out << "warp request: " << access.width_bytes << "-byte accesses; " << report.wavefronts << " wavefront"
      << (report.wavefronts == 1 ? "" : "s") << " (ideal " << report.ideal_wavefronts << ", excess " << report.excess()
      << ")";
  if (report.max_way > 1) out << "; worst bank: " << report.max_way << "-way conflict";
  out << "\nbank |";
  for (auto row : rows) {
    std::string head = "w";
    head += std::to_string(row * kBanks);
    head += '+';
    out << " " << head << std::string(width > head.size() ? width - head.size() : 0, ' ');
  }
  if (truncated) out << " ...";
  out << "\n";
  for (int bank = 0; bank < kBanks; ++bank) {
    std::ostringstream line;
    int distinct = 0;
    line << (bank < 10 ? "   " : "  ") << bank << " |";
    for (auto row : rows) {
      auto it = lanes_at[row].find(bank);
      const std::string text = it == lanes_at[row].end() ? "." : cell_text(it->second);
      if (it != lanes_at[row].end()) ++distinct;
      line << " " << text << std::string(width - text.size(), ' ');
    }
    if (distinct > 1) line << "  <- " << distinct << " words in one bank";
    out << line.str() << "\n";
  }
  out << "(column w<k>+: words k..k+31; cell: first lane and how many more lanes share that word)\n";
  return out.str();
}

RequestSummary summarize(const std::vector<NamedRequest>& requests) {
  RequestSummary s;
  for (const auto& r : requests) {
    const auto report = analyze_bank_conflicts(r.access);
    ++s.requests;
    s.wavefronts += report.wavefronts;
    s.ideal_wavefronts += report.ideal_wavefronts;
    s.max_way = std::max(s.max_way, report.max_way);
    s.worst_excess = std::max(s.worst_excess, report.excess());
  }
  return s;
}

}  // namespace gpulab
