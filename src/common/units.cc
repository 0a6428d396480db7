// Unit parsing: one table of suffixes per kind, no locale, no exceptions (rules in units.h).
#include "common/units.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace iorelay::units {
namespace {

struct Suffix {
  std::string_view text;
  double factor;
};

constexpr double kKi = 1024.0;
constexpr Suffix kSizeSuffixes[] = {{"", 1},
                                    {"B", 1},
                                    {"K", kKi},
                                    {"k", kKi},
                                    {"KiB", kKi},
                                    {"M", kKi* kKi},
                                    {"m", kKi* kKi},
                                    {"MiB", kKi* kKi},
                                    {"G", kKi* kKi* kKi},
                                    {"g", kKi* kKi* kKi},
                                    {"GiB", kKi* kKi* kKi},
                                    {"T", kKi* kKi* kKi* kKi},
                                    {"t", kKi* kKi* kKi* kKi},
                                    {"TiB", kKi* kKi* kKi* kKi},
                                    {"kB", 1e3},
                                    {"KB", 1e3},
                                    {"MB", 1e6},
                                    {"GB", 1e9},
                                    {"TB", 1e12}};
constexpr Suffix kRatePrefixes[] = {{"", 1},
                                    {"k", 1e3},
                                    {"K", 1e3},
                                    {"M", 1e6},
                                    {"G", 1e9},
                                    {"T", 1e12},
                                    {"Ki", kKi},
                                    {"Mi", kKi* kKi},
                                    {"Gi", kKi* kKi* kKi},
                                    {"Ti", kKi* kKi* kKi* kKi}};
constexpr Suffix kTimeSuffixes[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};

constexpr const char* kSizeForms =
    "a number of bytes with an optional unit: B; K, M, G, T or KiB, MiB, GiB, TiB (1024-based); "
    "kB, MB, GB, TB (1000-based)";
constexpr const char* kRateForms =
    "a number, an optional prefix k, M, G, T (1000-based) or Ki, Mi, Gi, Ti (1024-based), B "
    "(bytes) or b (bits), then ps or /s, e.g. 10Gbps or 1.5GBps";
constexpr const char* kTimeForms = "a number with ns, us, ms or s (0 may stand alone)";

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// Splits "12.5MiB" into 12.5 and "MiB": a plain decimal (digits, at most one point), no sign,
// no exponent, no hexadecimal, so that both languages read the same numbers.
bool SplitNumber(std::string_view text, double* value, std::string_view* suffix) {
  text = Trim(text);
  size_t i = 0, digits = 0;
  bool point = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c >= '0' && c <= '9') {
      ++digits;
    } else if (c == '.' && !point) {
      point = true;
    } else {
      break;
    }
  }
  if (digits == 0) return false;
  *value = std::strtod(std::string(text.substr(0, i)).c_str(), nullptr);
  *suffix = Trim(text.substr(i));
  return std::isfinite(*value);
}

bool Lookup(std::string_view suffix, const Suffix* table, size_t n, double* factor) {
  for (size_t i = 0; i < n; ++i) {
    if (table[i].text == suffix) {
      *factor = table[i].factor;
      return true;
    }
  }
  return false;
}

Status Bad(const char* what, std::string_view text, const char* forms) {
  return Status::InvalidArgument("bad " + std::string(what) + " '" + std::string(text) +
                                 "': expected " + forms);
}

}  // namespace

Result<uint64_t> ParseBytes(std::string_view text) {
  double value = 0, factor = 0;
  std::string_view suffix;
  if (!SplitNumber(text, &value, &suffix) ||
      !Lookup(suffix, kSizeSuffixes, std::size(kSizeSuffixes), &factor)) {
    return Bad("size", text, kSizeForms);
  }
  const double bytes = value * factor;
  if (bytes >= 18446744073709551616.0) {
    return Status::InvalidArgument("size '" + std::string(text) + "' is larger than 2^64 - 1");
  }
  const double whole = std::round(bytes);
  if (std::fabs(bytes - whole) > 1e-6 * std::max(1.0, whole)) {
    return Status::InvalidArgument("size '" + std::string(text) +
                                   "' is not a whole number of bytes");
  }
  return static_cast<uint64_t>(whole);
}

Result<int64_t> ParseDurationNs(std::string_view text) {
  double value = 0, factor = 0;
  std::string_view suffix;
  if (!SplitNumber(text, &value, &suffix)) return Bad("duration", text, kTimeForms);
  if (suffix.empty() && value == 0) return int64_t{0};
  if (!Lookup(suffix, kTimeSuffixes, std::size(kTimeSuffixes), &factor)) {
    return Bad("duration", text, kTimeForms);
  }
  const double ns = value * factor;
  if (ns >= 9223372036854775807.0) {
    return Status::InvalidArgument("duration '" + std::string(text) + "' is out of range");
  }
  return static_cast<int64_t>(std::llround(ns));
}

Result<double> ParseBytesPerSecond(std::string_view text) {
  double value = 0;
  std::string_view unit;
  if (!SplitNumber(text, &value, &unit)) return Bad("rate", text, kRateForms);
  if (unit.ends_with("/s") || unit.ends_with("ps")) {
    unit.remove_suffix(2);
  } else {
    return Bad("rate", text, kRateForms);
  }
  if (unit.empty() || (unit.back() != 'B' && unit.back() != 'b')) {
    return Bad("rate", text, kRateForms);
  }
  const double per_unit = unit.back() == 'B' ? 1.0 : 1.0 / 8.0;
  unit.remove_suffix(1);
  double prefix = 0;
  if (!Lookup(unit, kRatePrefixes, std::size(kRatePrefixes), &prefix)) {
    return Bad("rate", text, kRateForms);
  }
  const double rate = value * prefix * per_unit;
  if (rate <= 0) return Status::InvalidArgument("rate '" + std::string(text) + "' is not positive");
  return rate;
}

std::string FormatBytes(uint64_t bytes) {
  static constexpr std::pair<uint64_t, const char*> kUnits[] = {
      {1ull << 40, "TiB"}, {1ull << 30, "GiB"}, {1ull << 20, "MiB"}, {1ull << 10, "KiB"}};
  for (const auto& [unit, name] : kUnits) {
    if (bytes != 0 && bytes % unit == 0) return std::to_string(bytes / unit) + name;
  }
  return std::to_string(bytes) + "B";
}

std::string FormatDurationNs(int64_t ns) {
  static constexpr std::pair<int64_t, const char*> kUnits[] = {
      {1'000'000'000, "s"}, {1'000'000, "ms"}, {1'000, "us"}};
  for (const auto& [unit, name] : kUnits) {
    if (ns != 0 && ns % unit == 0) return std::to_string(ns / unit) + name;
  }
  return std::to_string(ns) + "ns";
}

}  // namespace iorelay::units
