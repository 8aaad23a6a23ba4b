#include "gpulab/check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <sstream>
#include <vector>

namespace gpulab {

CheckResult CheckResult::fail(std::string message, std::string detail) {
  CheckResult r;
  r.ok = false;
  r.message = std::move(message);
  r.detail = std::move(detail);
  return r;
}

std::string CheckResult::to_string() const {
  if (ok) return "ok";
  return detail.empty() ? message : message + "\n" + detail;
}

namespace {

template <class T>
std::string show(T v) {
  std::ostringstream s;
  if constexpr (std::is_floating_point_v<T>) {
    s << std::setprecision(9) << v;
  } else if constexpr (sizeof(T) == 1) {
    s << static_cast<int>(v);
  } else {
    s << v;
  }
  return s.str();
}

// The rows around `first`: index, expected, actual, and a marker on the rows that differ.
template <class T, class Same>
std::string window_around(std::span<const T> expected, std::span<const T> actual, std::size_t first,
                          std::size_t window, Same same) {
  std::ostringstream out;
  const std::size_t lo = first > window ? first - window : 0;
  const std::size_t hi = std::min(expected.size(), first + window + 1);
  out << "      index      expected        actual\n";
  for (std::size_t i = lo; i < hi; ++i) {
    const bool differs = i < actual.size() && !same(expected[i], actual[i]);
    out << (differs ? "  >> " : "     ") << std::setw(10) << i << "  " << std::setw(12) << show(expected[i]) << "  "
        << std::setw(12) << (i < actual.size() ? show(actual[i]) : std::string("-")) << "\n";
  }
  return out.str();
}

template <class T, class Same>
CheckResult compare_with(std::span<const T> expected, std::span<const T> actual, std::size_t window, Same same,
                         const char* how) {
  if (expected.size() != actual.size()) {
    std::ostringstream m;
    m << "size mismatch: expected " << expected.size() << " elements, got " << actual.size();
    return CheckResult::fail(m.str());
  }
  std::size_t first = expected.size(), count = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (!same(expected[i], actual[i])) {
      if (count == 0) first = i;
      ++count;
    }
  }
  if (count == 0) return CheckResult::pass();
  std::ostringstream m;
  m << count << " of " << expected.size() << " elements differ" << how << "; first at index " << first
    << ": expected " << show(expected[first]) << ", got " << show(actual[first]);
  auto r = CheckResult::fail(m.str(), window_around(expected, actual, first, window, same));
  r.first_mismatch = first;
  r.mismatch_count = count;
  return r;
}

}  // namespace

template <class T>
CheckResult compare_exact(std::span<const T> expected, std::span<const T> actual, std::size_t window) {
  return compare_with(expected, actual, window, [](const T& a, const T& b) { return a == b; }, "");
}

CheckResult compare_near(std::span<const float> expected, std::span<const float> actual, double rel_tol,
                         double abs_tol, std::size_t window) {
  auto near = [=](float e, float a) {
    if (std::isnan(e) || std::isnan(a)) return false;
    return std::fabs(double(e) - double(a)) <= abs_tol + rel_tol * std::fabs(double(e));
  };
  std::ostringstream how;
  how << " (tolerance " << rel_tol << " relative + " << abs_tol << " absolute)";
  const std::string h = how.str();
  return compare_with(expected, actual, window, near, h.c_str());
}

template <class T>
CheckResult check_sorted(std::span<const T> values, std::size_t window) {
  std::size_t first = values.size(), count = 0;
  for (std::size_t i = 1; i < values.size(); ++i) {
    if (values[i] < values[i - 1]) {
      if (count == 0) first = i;
      ++count;
    }
  }
  if (count == 0) return CheckResult::pass();
  std::ostringstream m, d;
  m << "not sorted: " << count << " descents; first at index " << first << ": " << show(values[first - 1]) << " then "
    << show(values[first]);
  const std::size_t lo = first > window ? first - window : 0;
  const std::size_t hi = std::min(values.size(), first + window + 1);
  d << "      index         value\n";
  for (std::size_t i = lo; i < hi; ++i)
    d << (i == first ? "  >> " : "     ") << std::setw(10) << i << "  " << std::setw(12) << show(values[i]) << "\n";
  auto r = CheckResult::fail(m.str(), d.str());
  r.first_mismatch = first;
  r.mismatch_count = count;
  return r;
}

template <class T>
CheckResult check_permutation(std::span<const T> original, std::span<const T> permuted) {
  if (original.size() != permuted.size()) {
    std::ostringstream m;
    m << "not a permutation: " << original.size() << " elements in, " << permuted.size() << " out";
    return CheckResult::fail(m.str());
  }
  std::vector<T> a(original.begin(), original.end()), b(permuted.begin(), permuted.end());
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  auto [ia, ib] = std::mismatch(a.begin(), a.end(), b.begin());
  if (ia == a.end()) return CheckResult::pass();
  std::ostringstream m;
  m << "not a permutation of the input: in sorted order, position " << (ia - a.begin()) << " holds " << show(*ia)
    << " in the input but " << show(*ib) << " in the output (an element was lost, duplicated or invented)";
  return CheckResult::fail(m.str());
}

#define GPULAB_INSTANTIATE(T)                                                                \
  template CheckResult compare_exact<T>(std::span<const T>, std::span<const T>, std::size_t); \
  template CheckResult check_sorted<T>(std::span<const T>, std::size_t);                     \
  template CheckResult check_permutation<T>(std::span<const T>, std::span<const T>);
GPULAB_INSTANTIATE(std::int32_t)
GPULAB_INSTANTIATE(std::uint32_t)
GPULAB_INSTANTIATE(std::int64_t)
GPULAB_INSTANTIATE(std::uint64_t)
GPULAB_INSTANTIATE(float)
GPULAB_INSTANTIATE(double)
GPULAB_INSTANTIATE(std::uint8_t)
#undef GPULAB_INSTANTIATE

}  // namespace gpulab
