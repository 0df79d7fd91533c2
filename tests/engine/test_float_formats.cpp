// Exhaustive tests of the scalar float conversions in formats/float_formats.h.
//
// Every check compares against a reference written from the format specs, which never calls the
// code under test: decodes are computed from the bit fields with std::ldexp in double; encodes
// pick, among all finite code points plus the "overflow point" one ulp past the largest finite
// value, the nearest to the input (tie: the code with an even mantissa, i.e. LSB 0), then apply
// the format's overflow rule when the overflow point wins. For the 8-bit formats that choice
// scans every code for every input; for bf16 and f16 (32k magnitudes) it bisects a sorted table
// of the decoded values, and a spot check shows the full scan agrees.
#include <QTest>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "formats/float_formats.h"

using namespace day0::formats;

namespace {

// ---- Reference model of a sign-magnitude binary format ----

enum class Specials {
  ieee,    // exponent all ones: inf (mantissa 0) or NaN
  e4m3fn,  // only S.1111.111 is special (NaN); no inf
};

struct Format {
  const char* name;
  int exp_bits;
  int man_bits;
  int bias;
  Specials specials;
};

constexpr Format kBf16{"bf16", 8, 7, 127, Specials::ieee};
constexpr Format kF16{"f16", 5, 10, 15, Specials::ieee};
constexpr Format kE4m3{"e4m3", 4, 3, 7, Specials::e4m3fn};
constexpr Format kE5m2{"e5m2", 5, 2, 15, Specials::ieee};

uint32_t sign_bit(const Format& f) { return 1u << (f.exp_bits + f.man_bits); }
uint32_t man_mask(const Format& f) { return (1u << f.man_bits) - 1u; }
uint32_t exp_all_ones(const Format& f) { return (1u << f.exp_bits) - 1u; }

// The largest finite magnitude code, from the spec: IEEE formats end below the all-ones
// exponent; E4M3fn uses the all-ones exponent too, all but its all-ones mantissa.
uint32_t max_finite_magnitude(const Format& f) {
  if (f.specials == Specials::ieee) return ((exp_all_ones(f) - 1u) << f.man_bits) | man_mask(f);
  return (exp_all_ones(f) << f.man_bits) | (man_mask(f) - 1u);
}

// A magnitude code's bit fields read as a finite number, with no inf/NaN rule. One past the
// largest finite code this is the overflow point (480 for E4M3, 2^16 for E5M2 and f16, 2^128 for
// bf16): where the grid would continue if the exponent range did.
double field_value(const Format& f, uint32_t magnitude) {
  const uint32_t man = magnitude & man_mask(f);
  const int exp = static_cast<int>(magnitude >> f.man_bits);
  if (exp == 0) return std::ldexp(static_cast<double>(man), 1 - f.bias - f.man_bits);
  return std::ldexp(static_cast<double>((1u << f.man_bits) | man), exp - f.bias - f.man_bits);
}

double ref_decode(const Format& f, uint32_t code) {
  const bool negative = (code & sign_bit(f)) != 0;
  const uint32_t magnitude = code & (sign_bit(f) - 1u);
  const uint32_t exp = magnitude >> f.man_bits;
  const uint32_t man = magnitude & man_mask(f);
  double value = 0.0;
  if (f.specials == Specials::ieee && exp == exp_all_ones(f)) {
    value = man == 0 ? std::numeric_limits<double>::infinity()
                     : std::numeric_limits<double>::quiet_NaN();
  } else if (f.specials == Specials::e4m3fn && magnitude == sign_bit(f) - 1u) {
    value = std::numeric_limits<double>::quiet_NaN();
  } else {
    value = field_value(f, magnitude);
  }
  return negative ? -value : value;
}

// Magnitude codes 0 .. max finite + 1 with their values; the last is the overflow point.
struct Candidates {
  std::vector<double> value_of_code;
  std::vector<std::pair<double, uint32_t>> sorted;  // (value, code), ascending
  uint32_t overflow_code = 0;
};

Candidates make_candidates(const Format& f) {
  Candidates c;
  c.overflow_code = max_finite_magnitude(f) + 1u;
  for (uint32_t code = 0; code <= c.overflow_code; ++code) {
    const double value =
        code < c.overflow_code ? ref_decode(f, code) : field_value(f, code);
    c.value_of_code.push_back(value);
    c.sorted.emplace_back(value, code);
  }
  std::sort(c.sorted.begin(), c.sorted.end());
  return c;
}

// lo <= x <= hi are adjacent candidates. Their midpoint is exact in double: both have at most
// 11 significant bits and lo >= hi / 2 or lo = 0.
uint32_t pick_nearest(double x, double lo, uint32_t lo_code, double hi, uint32_t hi_code) {
  if (x == lo) return lo_code;
  if (x == hi) return hi_code;
  const double mid = (lo + hi) / 2.0;
  if (x < mid) return lo_code;
  if (x > mid) return hi_code;
  return (lo_code & 1u) == 0 ? lo_code : hi_code;
}

// Reference RNE of a non-negative, non-NaN x: scans every candidate for the neighbours.
uint32_t round_by_scan(const Candidates& c, double x) {
  std::optional<uint32_t> lo;
  std::optional<uint32_t> hi;
  for (uint32_t code = 0; code < c.value_of_code.size(); ++code) {
    const double v = c.value_of_code[code];
    if (v <= x && (!lo || v > c.value_of_code[*lo])) lo = code;
    if (v >= x && (!hi || v < c.value_of_code[*hi])) hi = code;
  }
  if (!hi) return c.overflow_code;  // beyond the overflow point (or +inf)
  return pick_nearest(x, c.value_of_code[*lo], *lo, c.value_of_code[*hi], *hi);
}

// The same choice by bisecting the sorted table.
uint32_t round_by_table(const Candidates& c, double x) {
  const auto hi = std::lower_bound(c.sorted.begin(), c.sorted.end(),
                                   std::pair<double, uint32_t>(x, 0u));
  if (hi == c.sorted.end()) return c.overflow_code;
  if (hi->first == x || hi == c.sorted.begin()) return hi->second;
  const auto lo = hi - 1;
  return pick_nearest(x, lo->first, lo->second, hi->first, hi->second);
}

// The reference encode of a non-NaN float: sign | rounded magnitude, with a rounding to the
// overflow point replaced by `overflow_result` (max finite to saturate, else the inf or NaN code).
template <typename Round>
uint32_t ref_encode(const Format& f, const Candidates& c, float x, uint32_t overflow_result,
                    Round round) {
  uint32_t magnitude = round(c, std::fabs(static_cast<double>(x)));
  if (magnitude == c.overflow_code) magnitude = overflow_result;
  return (std::signbit(x) ? sign_bit(f) : 0u) | magnitude;
}

// ---- Inputs ----

float float_from_bits(uint32_t bits) { return std::bit_cast<float>(bits); }

std::vector<float> every_bf16_as_float() {
  std::vector<float> out;
  for (uint32_t code = 0; code < 0x10000u; ++code) out.push_back(float_from_bits(code << 16));
  return out;
}

void push_with_neighbours(std::vector<float>& out, float x) {
  out.push_back(x);
  out.push_back(std::nextafter(x, -std::numeric_limits<float>::infinity()));
  out.push_back(std::nextafter(x, std::numeric_limits<float>::infinity()));
}

// Every candidate value and every midpoint of adjacent candidates (the overflow point
// included), each with its float neighbours both ways, in both signs. bf16's overflow point,
// 2^128, is past float's range and is left out. Returns an empty vector if any other point is
// not a float, which the caller reports.
std::vector<float> grid_and_midpoints(const Candidates& c) {
  std::vector<float> out;
  for (size_t i = 0; i < c.sorted.size(); ++i) {
    const double value = c.sorted[i].first;
    const bool last = i + 1 == c.sorted.size();
    if (last && value > std::numeric_limits<float>::max()) break;
    if (static_cast<double>(static_cast<float>(value)) != value) return {};
    push_with_neighbours(out, static_cast<float>(value));
    if (last) break;
    const double mid = (value + c.sorted[i + 1].first) / 2.0;
    if (static_cast<double>(static_cast<float>(mid)) != mid) return {};
    push_with_neighbours(out, static_cast<float>(mid));
  }
  const size_t n = out.size();
  for (size_t i = 0; i < n; ++i) out.push_back(-out[i]);
  return out;
}

std::vector<float> special_inputs() {
  const float inf = std::numeric_limits<float>::infinity();
  return {0.0f,
          -0.0f,
          inf,
          -inf,
          std::numeric_limits<float>::max(),
          -std::numeric_limits<float>::max(),
          std::numeric_limits<float>::min(),
          std::numeric_limits<float>::denorm_min(),
          -std::numeric_limits<float>::denorm_min(),
          float_from_bits(0x7FC00000u),   // quiet NaN
          float_from_bits(0xFFC00000u),   // negative quiet NaN
          float_from_bits(0x7F800001u),   // signalling NaN, smallest payload
          float_from_bits(0xFFA5A5A5u),   // negative signalling NaN with a payload
          float_from_bits(0x7FFFFFFFu)};  // quiet NaN, all payload bits
}

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> out;
  for (size_t i = 0; i < n; ++i) out.push_back(float_from_bits(static_cast<uint32_t>(rng())));
  return out;
}

// ---- Reporting ----

std::string hex(uint32_t value) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%X", value);
  return buf;
}

std::string describe(float x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a (bits 0x%08X)", static_cast<double>(x),
                std::bit_cast<uint32_t>(x));
  return buf;
}

// Counts failed checks and keeps the first few descriptions, so one QVERIFY per test reports
// the inputs that failed without a per-element QCOMPARE in million-iteration loops.
class Mismatches {
 public:
  template <typename Describe>
  void expect(bool ok, Describe&& what) {
    ++checked_;
    if (ok) return;
    if (failed_++ < 8) report_ += std::string(what()) + "\n";
  }
  size_t checked() const { return checked_; }
  bool ok() const { return failed_ == 0; }
  std::string report() const {
    return std::to_string(failed_) + " of " + std::to_string(checked_) + " checks failed:\n" +
           report_;
  }

 private:
  size_t checked_ = 0;
  size_t failed_ = 0;
  std::string report_;
};

// Bitwise float identity, except that any two NaNs match (NaN bits are checked separately).
bool same_float(double reference, float got) {
  if (std::isnan(reference)) return std::isnan(got);
  return static_cast<double>(got) == reference && std::signbit(got) == std::signbit(reference);
}

template <typename Decode>
void check_decode_all(const Format& f, Decode decode, Mismatches& m) {
  const uint32_t n_codes = sign_bit(f) << 1;
  for (uint32_t code = 0; code < n_codes; ++code) {
    const double want = ref_decode(f, code);
    const float got = decode(code);
    m.expect(same_float(want, got), [&] {
      return std::string(f.name) + " " + hex(code) + ": got " + describe(got) + ", want " +
             describe(static_cast<float>(want));
    });
  }
}

// Encodes every input and compares with the reference. NaN inputs go to `nan_ok`, which checks
// the format's NaN rule on (input, output).
template <typename Encode, typename Round, typename NanOk>
void check_encode(const Format& f, const Candidates& c, const std::vector<float>& inputs,
                  uint32_t overflow_result, Encode encode, Round round, NanOk nan_ok,
                  Mismatches& m) {
  for (const float x : inputs) {
    const uint32_t got = encode(x);
    if (std::isnan(x)) {
      m.expect(nan_ok(x, got), [&] {
        return std::string(f.name) + " NaN " + describe(x) + " -> " + hex(got);
      });
      continue;
    }
    const uint32_t want = ref_encode(f, c, x, overflow_result, round);
    m.expect(got == want, [&] {
      return std::string(f.name) + " " + describe(x) + ": got " + hex(got) + ", want " +
             hex(want);
    });
  }
}

std::vector<float> concat(std::initializer_list<std::vector<float>> parts) {
  std::vector<float> out;
  for (const auto& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

// An IEEE-style NaN code of `f`: exponent all ones, quiet bit (top mantissa bit) set, and the
// input's sign.
bool is_quiet_nan_with_sign(const Format& f, uint32_t code, float input) {
  const uint32_t magnitude = code & (sign_bit(f) - 1u);
  const bool nan = (magnitude >> f.man_bits) == exp_all_ones(f) && (magnitude & man_mask(f)) != 0;
  const bool quiet = (magnitude & (1u << (f.man_bits - 1))) != 0;
  const bool sign = (code & sign_bit(f)) != 0;
  return nan && quiet && sign == std::signbit(input);
}

// The compiler's _Float16 conversions are a second f16 reference, independent of the code under
// test and of the model above. GCC 12 has the type on x86-64 (and defines __FLT16_MAX__ then);
// compilers without it (Clang < 15 on x86-64, MSVC) skip that cross-check.
#if defined(__FLT16_MAX__)
#define DAY0_TEST_HAVE_FLOAT16 1
#else
#define DAY0_TEST_HAVE_FLOAT16 0
#endif

// Decoders are constexpr: usable to build tables at compile time.
static_assert(bf16_to_f32(0x3F80) == 1.0f);
static_assert(f32_to_bf16(1.0f) == 0x3F80);
static_assert(f16_to_f32(0x3C00) == 1.0f);
static_assert(fp8_e4m3_to_f32(0x7E) == 448.0f);
static_assert(fp8_e5m2_to_f32(0x7B) == 57344.0f);
static_assert(e8m0_to_f32(127) == 1.0f);

}  // namespace

class TestFloatFormats : public QObject {
  Q_OBJECT

 private slots:
  void bf16_decode_all_codes();
  void bf16_encode_matches_reference();
  void f16_decode_all_codes();
  void f16_encode_matches_reference();
  void f16_and_bf16_table_reference_agrees_with_full_scan();
  void fp8_e4m3_decode_all_codes();
  void fp8_e4m3_encode_matches_reference();
  void fp8_e5m2_decode_all_codes();
  void fp8_e5m2_encode_matches_reference();
  void encode_of_decode_is_identity();
  void e8m0_decode_all_codes();
  void e8m0_encode_matches_reference();
};

void TestFloatFormats::bf16_decode_all_codes() {
  Mismatches m;
  check_decode_all(kBf16, [](uint32_t code) { return bf16_to_f32(static_cast<uint16_t>(code)); },
                   m);
  // NaNs keep their payload and sign: bf16 is the top half of a float.
  for (uint32_t code = 0; code < 0x10000u; ++code) {
    const float got = bf16_to_f32(static_cast<uint16_t>(code));
    m.expect(std::bit_cast<uint32_t>(got) == code << 16,
             [&] { return "bf16 " + hex(code) + " decodes to bits " + describe(got); });
  }
  QVERIFY2(m.ok(), m.report().c_str());
  QCOMPARE(m.checked(), size_t{2} * 0x10000u);
}

void TestFloatFormats::bf16_encode_matches_reference() {
  const Candidates c = make_candidates(kBf16);
  const std::vector<float> grid = grid_and_midpoints(c);
  QVERIFY2(!grid.empty(), "a bf16 grid point or midpoint is not a float");
  const std::vector<float> inputs = concat({grid, special_inputs(), random_floats(200000, 1)});
  Mismatches m;
  check_encode(
      kBf16, c, inputs, c.overflow_code,  // IEEE: overflow is inf, which is the overflow code
      [](float x) { return uint32_t{f32_to_bf16(x)}; }, round_by_table,
      [](float x, uint32_t got) {
        // Quiet, sign kept, and the rest of the top payload kept.
        return is_quiet_nan_with_sign(kBf16, got, x) &&
               (got & 0x3Fu) == ((std::bit_cast<uint32_t>(x) >> 16) & 0x3Fu);
      },
      m);
  QVERIFY2(m.ok(), m.report().c_str());
  QVERIFY(m.checked() > 6 * 32000);
}

void TestFloatFormats::f16_decode_all_codes() {
  Mismatches m;
  check_decode_all(kF16, [](uint32_t code) { return f16_to_f32(static_cast<uint16_t>(code)); },
                   m);
  for (uint32_t code = 0; code < 0x10000u; ++code) {
    const float got = f16_to_f32(static_cast<uint16_t>(code));
#if DAY0_TEST_HAVE_FLOAT16
    const float compiler = static_cast<float>(std::bit_cast<_Float16>(static_cast<uint16_t>(code)));
    m.expect(same_float(static_cast<double>(compiler), got), [&] {
      return "f16 " + hex(code) + ": got " + describe(got) + ", _Float16 gives " +
             describe(compiler);
    });
#endif
    if ((code & 0x7C00u) == 0x7C00u && (code & 0x03FFu) != 0) {
      // NaN: sign and payload kept, quiet bit set.
      const uint32_t bits = std::bit_cast<uint32_t>(got);
      m.expect((bits >> 31) == (code >> 15) && (bits & 0x00400000u) != 0 &&
                   ((bits >> 13) & 0x1FFu) == (code & 0x1FFu),
               [&] { return "f16 NaN " + hex(code) + " decodes to " + describe(got); });
    }
  }
  QVERIFY2(m.ok(), m.report().c_str());
}

void TestFloatFormats::f16_encode_matches_reference() {
  const Candidates c = make_candidates(kF16);
  const std::vector<float> grid = grid_and_midpoints(c);
  QVERIFY2(!grid.empty(), "an f16 grid point or midpoint is not a float");
  const std::vector<float> inputs = concat({every_bf16_as_float(), grid, special_inputs()});
  const auto nan_ok = [](float x, uint32_t got) {
    return is_quiet_nan_with_sign(kF16, got, x) &&
           (got & 0x1FFu) == ((std::bit_cast<uint32_t>(x) >> 13) & 0x1FFu);
  };
  Mismatches m;
  check_encode(
      kF16, c, inputs, c.overflow_code, [](float x) { return uint32_t{f32_to_f16(x)}; },
      round_by_table, nan_ok, m);
#if DAY0_TEST_HAVE_FLOAT16
  // The compiler's own conversion (libgcc's __truncsfhf2 or F16C) must agree as well.
  for (const float x : inputs) {
    if (std::isnan(x)) continue;
    const auto want = std::bit_cast<uint16_t>(static_cast<_Float16>(x));
    const uint16_t got = f32_to_f16(x);
    m.expect(got == want, [&] {
      return "f16 " + describe(x) + ": got " + hex(got) + ", _Float16 gives " + hex(want);
    });
  }
#endif
  QVERIFY2(m.ok(), m.report().c_str());
  QVERIFY(m.checked() >= inputs.size());
  QVERIFY(inputs.size() > 65536 + 6 * 31000);
}

void TestFloatFormats::f16_and_bf16_table_reference_agrees_with_full_scan() {
  // The encode tests above use the bisected table; a full scan of every code point must give the
  // same answer. Spot-checked on a sample because each scan visits 32k codes.
  for (const Format& f : {kF16, kBf16}) {
    const Candidates c = make_candidates(f);
    std::vector<float> sample = grid_and_midpoints(c);
    QVERIFY(!sample.empty());
    std::mt19937 rng(7);
    std::shuffle(sample.begin(), sample.end(), rng);
    sample.resize(1500);
    const std::vector<float> extra = concat({special_inputs(), random_floats(500, 3)});
    sample.insert(sample.end(), extra.begin(), extra.end());
    Mismatches m;
    for (const float x : sample) {
      if (std::isnan(x)) continue;
      const double ax = std::fabs(static_cast<double>(x));
      const uint32_t scan = round_by_scan(c, ax);
      const uint32_t table = round_by_table(c, ax);
      m.expect(scan == table, [&] {
        return std::string(f.name) + " " + describe(x) + ": scan " + hex(scan) + ", table " +
               hex(table);
      });
    }
    QVERIFY2(m.ok(), m.report().c_str());
  }
}

void TestFloatFormats::fp8_e4m3_decode_all_codes() {
  Mismatches m;
  check_decode_all(kE4m3, [](uint32_t code) { return fp8_e4m3_to_f32(static_cast<uint8_t>(code)); },
                   m);
  QVERIFY2(m.ok(), m.report().c_str());
  // Spot values from the OCP spec.
  QCOMPARE(fp8_e4m3_to_f32(0x7E), 448.0f);
  QCOMPARE(fp8_e4m3_to_f32(0x01), 0x1p-9f);
  QCOMPARE(fp8_e4m3_to_f32(0x08), 0x1p-6f);
  QVERIFY(std::isnan(fp8_e4m3_to_f32(0x7F)) && std::isnan(fp8_e4m3_to_f32(0xFF)));
  QVERIFY(std::signbit(fp8_e4m3_to_f32(0xFF)) && std::signbit(fp8_e4m3_to_f32(0x80)));
  QVERIFY(std::isfinite(fp8_e4m3_to_f32(0x78)));  // exponent all ones is still finite (256)
}

void TestFloatFormats::fp8_e4m3_encode_matches_reference() {
  const Candidates c = make_candidates(kE4m3);
  QCOMPARE(c.value_of_code[c.overflow_code], 480.0);
  const std::vector<float> grid = grid_and_midpoints(c);
  QVERIFY(!grid.empty());
  const std::vector<float> inputs = concat({every_bf16_as_float(), grid, special_inputs()});
  const auto nan_ok = [](float x, uint32_t got) {
    return got == ((std::signbit(x) ? 0x80u : 0u) | kFp8E4m3Nan);
  };
  Mismatches m;
  check_encode(
      kE4m3, c, inputs, kFp8E4m3MaxFinite,
      [](float x) { return uint32_t{f32_to_fp8_e4m3(x, Fp8Overflow::saturate)}; }, round_by_scan,
      nan_ok, m);
  // Non-saturating: overflow and +-inf become NaN (0x7F / 0xFF), E4M3 having no inf.
  check_encode(
      kE4m3, c, inputs, kFp8E4m3Nan,
      [](float x) { return uint32_t{f32_to_fp8_e4m3(x, Fp8Overflow::nan)}; }, round_by_scan,
      nan_ok, m);
  QVERIFY2(m.ok(), m.report().c_str());
  QVERIFY(m.checked() > 2 * (65536 + 6 * 127));
  // The defaults and edges named in the header.
  QCOMPARE(f32_to_fp8_e4m3(464.0f), uint8_t{0x7E});
  QCOMPARE(f32_to_fp8_e4m3(std::nextafter(464.0f, 1000.0f), Fp8Overflow::nan), uint8_t{0x7F});
  QCOMPARE(f32_to_fp8_e4m3(-std::numeric_limits<float>::infinity()), uint8_t{0xFE});
  QCOMPARE(f32_to_fp8_e4m3(-0.0f), uint8_t{0x80});
}

void TestFloatFormats::fp8_e5m2_decode_all_codes() {
  Mismatches m;
  check_decode_all(kE5m2, [](uint32_t code) { return fp8_e5m2_to_f32(static_cast<uint8_t>(code)); },
                   m);
  QVERIFY2(m.ok(), m.report().c_str());
  QCOMPARE(fp8_e5m2_to_f32(0x7B), 57344.0f);
  QCOMPARE(fp8_e5m2_to_f32(0x01), 0x1p-16f);
  QCOMPARE(fp8_e5m2_to_f32(0x7C), std::numeric_limits<float>::infinity());
}

void TestFloatFormats::fp8_e5m2_encode_matches_reference() {
  const Candidates c = make_candidates(kE5m2);
  QCOMPARE(c.value_of_code[c.overflow_code], 65536.0);
  const std::vector<float> grid = grid_and_midpoints(c);
  QVERIFY(!grid.empty());
  const std::vector<float> inputs = concat({every_bf16_as_float(), grid, special_inputs()});
  const auto nan_ok = [](float x, uint32_t got) { return is_quiet_nan_with_sign(kE5m2, got, x); };
  Mismatches m;
  check_encode(
      kE5m2, c, inputs, kFp8E5m2MaxFinite,
      [](float x) { return uint32_t{f32_to_fp8_e5m2(x, Fp8Overflow::saturate)}; }, round_by_scan,
      nan_ok, m);
  // Non-saturating: IEEE behaviour, overflow and +-inf give +-inf (0x7C / 0xFC).
  check_encode(
      kE5m2, c, inputs, kFp8E5m2Inf,
      [](float x) { return uint32_t{f32_to_fp8_e5m2(x, Fp8Overflow::nan)}; }, round_by_scan,
      nan_ok, m);
  QVERIFY2(m.ok(), m.report().c_str());
  QCOMPARE(f32_to_fp8_e5m2(61440.0f, Fp8Overflow::nan), uint8_t{0x7C});
  QCOMPARE(f32_to_fp8_e5m2(std::nextafter(61440.0f, 0.0f), Fp8Overflow::nan), uint8_t{0x7B});
  QCOMPARE(f32_to_fp8_e5m2(std::numeric_limits<float>::infinity()), uint8_t{0x7B});
}

void TestFloatFormats::encode_of_decode_is_identity() {
  Mismatches m;
  for (uint32_t code = 0; code < 0x10000u; ++code) {
    const auto c16 = static_cast<uint16_t>(code);
    if (!std::isnan(ref_decode(kBf16, code))) {
      m.expect(f32_to_bf16(bf16_to_f32(c16)) == c16, [&] { return "bf16 " + hex(code); });
    }
    if (!std::isnan(ref_decode(kF16, code))) {
      m.expect(f32_to_f16(f16_to_f32(c16)) == c16, [&] { return "f16 " + hex(code); });
    }
  }
  for (uint32_t code = 0; code < 0x100u; ++code) {
    const auto c8 = static_cast<uint8_t>(code);
    for (const Fp8Overflow mode : {Fp8Overflow::saturate, Fp8Overflow::nan}) {
      if (!std::isnan(ref_decode(kE4m3, code))) {
        m.expect(f32_to_fp8_e4m3(fp8_e4m3_to_f32(c8), mode) == c8,
                 [&] { return "e4m3 " + hex(code); });
      }
      // Under saturation inf encodes to the max finite value, not back to inf.
      const double value = ref_decode(kE5m2, code);
      if (!std::isnan(value) && (mode == Fp8Overflow::nan || !std::isinf(value))) {
        m.expect(f32_to_fp8_e5m2(fp8_e5m2_to_f32(c8), mode) == c8,
                 [&] { return "e5m2 " + hex(code); });
      }
    }
  }
  QVERIFY2(m.ok(), m.report().c_str());
}

void TestFloatFormats::e8m0_decode_all_codes() {
  Mismatches m;
  for (uint32_t code = 0; code < 0x100u; ++code) {
    const auto c8 = static_cast<uint8_t>(code);
    const float got = e8m0_to_f32(c8);
    if (code == 0xFF) {
      m.expect(std::isnan(got) && e8m0_is_nan(c8), [&] { return "e8m0 0xFF is not NaN"; });
      continue;
    }
    const double want = std::ldexp(1.0, static_cast<int>(code) - 127);
    m.expect(same_float(want, got) && !e8m0_is_nan(c8) &&
                 e8m0_exponent(c8) == static_cast<int>(code) - 127,
             [&] { return "e8m0 " + hex(code) + " decodes to " + describe(got); });
  }
  QVERIFY2(m.ok(), m.report().c_str());
  // 2^-127 is a float subnormal and must not be flushed.
  QCOMPARE(std::bit_cast<uint32_t>(e8m0_to_f32(0)), 0x00400000u);
}

void TestFloatFormats::e8m0_encode_matches_reference() {
  // Reference: candidates 2^(e-127), e = 0..254. Floor takes the largest <= x (none: clamp to
  // 0x00); nearest takes the nearer neighbour by value, a tie going up; past 2^127 both clamp to
  // 0xFE. Zero gives 0x00, +inf 0xFE, NaN and negatives 0xFF.
  std::vector<double> value(255);
  for (int e = 0; e < 255; ++e) value[static_cast<size_t>(e)] = std::ldexp(1.0, e - 127);
  const auto reference = [&](float x, E8m0Rounding rounding) -> uint32_t {
    if (std::isnan(x)) return 0xFF;
    if (x == 0.0f) return 0x00;
    if (x < 0.0f) return 0xFF;
    std::optional<uint32_t> lo;
    std::optional<uint32_t> hi;
    for (uint32_t e = 0; e < 255; ++e) {
      if (value[e] <= x && (!lo || value[e] > value[*lo])) lo = e;
      if (value[e] >= x && (!hi || value[e] < value[*hi])) hi = e;
    }
    if (!lo) return 0x00;
    if (!hi) return 0xFE;
    if (rounding == E8m0Rounding::floor || *lo == *hi) return *lo;
    const double mid = (value[*lo] + value[*hi]) / 2.0;  // 1.5 * lo: exact
    return x < mid ? *lo : *hi;
  };
  std::vector<float> inputs = every_bf16_as_float();
  for (int k = -149; k <= 127; ++k) {
    push_with_neighbours(inputs, std::ldexp(1.0f, k));
    push_with_neighbours(inputs, std::ldexp(1.5f, k));
  }
  const std::vector<float> extra = concat({special_inputs(), random_floats(20000, 5)});
  inputs.insert(inputs.end(), extra.begin(), extra.end());
  Mismatches m;
  for (const float x : inputs) {
    for (const E8m0Rounding rounding : {E8m0Rounding::floor, E8m0Rounding::nearest}) {
      const uint32_t got = f32_to_e8m0(x, rounding);
      const uint32_t want = reference(x, rounding);
      m.expect(got == want, [&] {
        return std::string(rounding == E8m0Rounding::floor ? "floor " : "nearest ") +
               describe(x) + ": got " + hex(got) + ", want " + hex(want);
      });
    }
  }
  QVERIFY2(m.ok(), m.report().c_str());
  QCOMPARE(f32_to_e8m0(0x1.8p-127f, E8m0Rounding::nearest), uint8_t{0x01});
  QCOMPARE(f32_to_e8m0(std::nextafter(1.5f, 0.0f), E8m0Rounding::nearest), uint8_t{127});
  QCOMPARE(f32_to_e8m0(1.5f, E8m0Rounding::nearest), uint8_t{128});
  QCOMPARE(f32_to_e8m0(1.99f, E8m0Rounding::floor), uint8_t{127});
}

QTEST_APPLESS_MAIN(TestFloatFormats)
#include "test_float_formats.moc"
