// Tests of formats/mxfp4.h: E2M1 elements, MXFP4 blocks, and the exact MXFP4 -> FP8 E4M3
// conversion.
//
// References never call the code under test: values come from the bit fields through
// std::ldexp in double (E2M1: 2 exponent bits bias 1, 1 mantissa bit, no inf/NaN; E4M3fn: bias
// 7, S.1111.111 NaN; bf16: bias 127; E8M0: 2^(e-127)), and encodes scan every code point for
// the nearest value (ties to the code with an even mantissa, LSB 0).
#include <QTest>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "formats/mxfp4.h"

using namespace day0::formats;

namespace {

// ---- Reference model of a sign-magnitude binary format ----

struct Format {
  const char* name;
  int exp_bits;
  int man_bits;
  int bias;
  bool e4m3fn_nan;  // S.1111.111 is NaN (E4M3fn); otherwise no code is special (E2M1)
};

constexpr Format kE2m1{"e2m1", 2, 1, 1, false};
constexpr Format kE4m3{"e4m3", 4, 3, 7, true};

uint32_t sign_bit(const Format& f) { return 1u << (f.exp_bits + f.man_bits); }
uint32_t man_mask(const Format& f) { return (1u << f.man_bits) - 1u; }

// Bit fields read as a finite number: exponent field 0 is subnormal, others normal.
double field_value(const Format& f, uint32_t magnitude) {
  const uint32_t man = magnitude & man_mask(f);
  const int exp = static_cast<int>(magnitude >> f.man_bits);
  if (exp == 0) return std::ldexp(static_cast<double>(man), 1 - f.bias - f.man_bits);
  return std::ldexp(static_cast<double>((1u << f.man_bits) | man), exp - f.bias - f.man_bits);
}

double ref_decode(const Format& f, uint32_t code) {
  const uint32_t magnitude = code & (sign_bit(f) - 1u);
  double value = field_value(f, magnitude);
  if (f.e4m3fn_nan && magnitude == sign_bit(f) - 1u) {
    value = std::numeric_limits<double>::quiet_NaN();
  }
  return (code & sign_bit(f)) != 0 ? -value : value;
}

double ref_e2m1(uint32_t code) { return ref_decode(kE2m1, code & 0x0Fu); }
double ref_e4m3(uint32_t code) { return ref_decode(kE4m3, code & 0xFFu); }

// bf16 from its bit fields (8 exponent bits, bias 127, 7 mantissa bits, IEEE inf/NaN).
double ref_bf16(uint16_t code) {
  const int exp = (code >> 7) & 0xFF;
  const int man = code & 0x7F;
  double value = 0.0;
  if (exp == 0xFF) {
    value = man == 0 ? std::numeric_limits<double>::infinity()
                     : std::numeric_limits<double>::quiet_NaN();
  } else if (exp == 0) {
    value = std::ldexp(man, -133);
  } else {
    value = std::ldexp(0x80 | man, exp - 134);
  }
  return (code & 0x8000u) != 0 ? -value : value;
}

double ref_scale(uint8_t scale) { return std::ldexp(1.0, static_cast<int>(scale) - 127); }

// Reference RNE of a non-negative x onto magnitude codes 0..max_code of `f`, scanning every code.
// Past the largest value, or at/after the midpoint to the next grid point one ulp further (8 for
// E2M1, 480 for E4M3), the result is `overflow`. Ties pick the even code.
uint32_t ref_round(const Format& f, uint32_t max_code, double x, uint32_t overflow) {
  const uint32_t overflow_point = max_code + 1;
  std::optional<uint32_t> lo;
  std::optional<uint32_t> hi;
  for (uint32_t code = 0; code <= overflow_point; ++code) {
    const double v = field_value(f, code);
    if (v <= x && (!lo || v > field_value(f, *lo))) lo = code;
    if (v >= x && (!hi || v < field_value(f, *hi))) hi = code;
  }
  if (!hi) return overflow;
  uint32_t pick = *hi;
  const double vlo = field_value(f, *lo);
  const double vhi = field_value(f, *hi);
  if (x == vlo) {
    pick = *lo;
  } else if (x != vhi) {
    const double mid = (vlo + vhi) / 2.0;  // exact: few significant bits
    if (x < mid || (x == mid && (*lo & 1u) == 0)) pick = *lo;
  }
  return pick == overflow_point ? overflow : pick;
}

// E2M1 encode reference: RNE, saturating at 6 (code 7), sign kept.
uint8_t ref_encode_e2m1(double x) {
  const uint32_t magnitude = ref_round(kE2m1, 7, std::fabs(x), 7);
  return static_cast<uint8_t>((std::signbit(x) ? 0x8u : 0u) | magnitude);
}

// E4M3 encode reference (only used on values that are in range).
uint8_t ref_encode_e4m3(double x) {
  const uint32_t magnitude = ref_round(kE4m3, 0x7E, std::fabs(x), 0x7F);
  return static_cast<uint8_t>((std::signbit(x) ? 0x80u : 0u) | magnitude);
}

// Element j of a packed block, read from the spec's layout: byte j/2, low nibble when j is even.
uint8_t element_code(const uint8_t* block, int j) {
  const uint8_t byte = block[j / 2];
  return (j % 2 == 0) ? (byte & 0x0F) : (byte >> 4);
}

// ---- Reporting ----

std::string hex(uint32_t value) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%X", value);
  return buf;
}

std::string describe(double x) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%a", x);
  return buf;
}

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

// Identity of doubles, telling -0 from +0; NaN matches NaN.
bool same_value(double want, double got) {
  if (std::isnan(want)) return std::isnan(got);
  return want == got && std::signbit(want) == std::signbit(got);
}

std::vector<uint8_t> random_bytes(std::mt19937& rng, size_t n, int max_value = 255) {
  std::uniform_int_distribution<int> dist(0, max_value);
  std::vector<uint8_t> out(n);
  for (auto& byte : out) byte = static_cast<uint8_t>(dist(rng));
  return out;
}

}  // namespace

class TestMxfp4 : public QObject {
  Q_OBJECT

 private slots:
  void e2m1_decode_all_codes();
  void e2m1_encode_matches_reference();
  void e2m1_to_fp8_e4m3_all_codes_and_pairs();
  void nibble_order_is_low_nibble_first();
  void dequantize_random_blocks_match_reference();
  void bf16_output_is_exact_for_every_code_and_scale();
  void quantize_rejects_bad_input();
  void quantize_matches_reference_within_error_bound();
  void representable_blocks_round_trip_exactly();
  void fp8_conversion_is_exact_for_every_byte_and_scale();
  void fp8_conversion_rejects_nan_scale();
};

void TestMxfp4::e2m1_decode_all_codes() {
  const std::array<double, 8> spec = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (uint32_t code = 0; code < 16; ++code) {
    const double want = ref_e2m1(code);
    QCOMPARE(std::fabs(want), spec[code & 7]);
    QVERIFY(same_value(want, e2m1_to_f32(static_cast<uint8_t>(code))));
    // The high nibble is ignored.
    QVERIFY(same_value(want, e2m1_to_f32(static_cast<uint8_t>(code | 0xA0))));
  }
}

void TestMxfp4::e2m1_encode_matches_reference() {
  std::vector<float> inputs;
  for (uint32_t code = 0; code < 0x10000u; ++code) {
    inputs.push_back(std::bit_cast<float>(code << 16));  // every bf16 value, NaNs included
  }
  // Every grid point and midpoint (with the overflow point 8 and midpoint 7), +-1 float ulp.
  for (uint32_t code = 0; code <= 8; ++code) {
    const double v = field_value(kE2m1, code);
    const double mids[] = {v, code < 8 ? (v + field_value(kE2m1, code + 1)) / 2.0 : v};
    for (const double point : mids) {
      const auto x = static_cast<float>(point);
      for (const float y : {x, std::nextafter(x, -1.0f), std::nextafter(x, 100.0f)}) {
        inputs.push_back(y);
        inputs.push_back(-y);
      }
    }
  }
  Mismatches m;
  for (const float x : inputs) {
    const uint8_t got = f32_to_e2m1(x);
    // NaN has no E2M1 code: the documented choice is +0.
    const uint8_t want = std::isnan(x) ? 0x0 : ref_encode_e2m1(x);
    m.expect(got == want, [&] {
      return describe(x) + ": got " + hex(got) + ", want " + hex(want);
    });
  }
  QVERIFY2(m.ok(), m.report().c_str());
  QVERIFY(m.checked() > 65536);
  QCOMPARE(f32_to_e2m1(-0.0f), uint8_t{0x8});
  QCOMPARE(f32_to_e2m1(5.0f), uint8_t{0x6});                                      // tie -> 4
  QCOMPARE(f32_to_e2m1(-std::numeric_limits<float>::infinity()), uint8_t{0xF});  // -6
}

void TestMxfp4::e2m1_to_fp8_e4m3_all_codes_and_pairs() {
  for (uint32_t code = 0; code < 16; ++code) {
    const uint8_t got = e2m1_to_fp8_e4m3(static_cast<uint8_t>(code));
    QCOMPARE(got, ref_encode_e4m3(ref_e2m1(code)));
    QVERIFY(same_value(ref_e2m1(code), ref_e4m3(got)));  // exact
  }
  for (uint32_t byte = 0; byte < 256; ++byte) {
    const uint16_t pair = e2m1_pair_to_fp8_e4m3[byte];
    QCOMPARE(static_cast<uint8_t>(pair & 0xFF), ref_encode_e4m3(ref_e2m1(byte & 0x0F)));
    QCOMPARE(static_cast<uint8_t>(pair >> 8), ref_encode_e4m3(ref_e2m1(byte >> 4)));
  }
}

void TestMxfp4::nibble_order_is_low_nibble_first() {
  // Expected values written from the spec: byte 0x21 holds element 0 = code 1 (0.5) in its low
  // nibble and element 1 = code 2 (1.0) in its high nibble; 0x9A: -1.0 then -0.5; 0x7F: -6 then 6.
  std::array<uint8_t, 16> block{};
  block[0] = 0x21;
  block[1] = 0x9A;
  block[15] = 0x7F;
  const uint8_t scale = 128;  // 2^1
  std::array<float, 32> out{};
  mxfp4_dequantize(block.data(), &scale, 1, out.data());
  QCOMPARE(out[0], 1.0f);
  QCOMPARE(out[1], 2.0f);
  QCOMPARE(out[2], -2.0f);
  QCOMPARE(out[3], -1.0f);
  QCOMPARE(out[4], 0.0f);
  QCOMPARE(out[30], -12.0f);
  QCOMPARE(out[31], 12.0f);

  std::array<uint16_t, 32> bf16{};
  mxfp4_dequantize_bf16(block.data(), &scale, 1, bf16.data());
  QCOMPARE(bf16[0], uint16_t{0x3F80});  // 1.0
  QCOMPARE(bf16[1], uint16_t{0x4000});  // 2.0
  QCOMPARE(bf16[2], uint16_t{0xC000});  // -2.0
  QCOMPARE(bf16[3], uint16_t{0xBF80});  // -1.0
  QCOMPARE(bf16[31], uint16_t{0x4140});  // 12.0

  std::array<uint8_t, 32> fp8{};
  int16_t exponent = 0;
  QVERIFY(mxfp4_to_fp8_e4m3(block.data(), &scale, 1, fp8.data(), &exponent).is_ok());
  QCOMPARE(exponent, int16_t{1});
  QCOMPARE(fp8[0], uint8_t{0x30});  // 0.5: exponent 6 (2^-1), mantissa 0
  QCOMPARE(fp8[1], uint8_t{0x38});  // 1.0
  QCOMPARE(fp8[2], uint8_t{0xB8});  // -1.0
  QCOMPARE(fp8[3], uint8_t{0xB0});  // -0.5
  QCOMPARE(fp8[30], uint8_t{0xCC});  // -6: exponent 9, mantissa 4
  QCOMPARE(fp8[31], uint8_t{0x4C});  // 6
}

void TestMxfp4::dequantize_random_blocks_match_reference() {
  std::mt19937 rng(11);
  const size_t n_blocks = 4096;
  const std::vector<uint8_t> blocks = random_bytes(rng, n_blocks * kMxfp4BlockBytes);
  std::vector<uint8_t> scales = random_bytes(rng, n_blocks, 254);
  scales[0] = 0;  // the extremes, float subnormal and float overflow
  scales[1] = 254;
  std::vector<float> out(n_blocks * kMxfp4BlockSize);
  std::vector<uint16_t> bf16(out.size());
  mxfp4_dequantize(blocks.data(), scales.data(), n_blocks, out.data());
  mxfp4_dequantize_bf16(blocks.data(), scales.data(), n_blocks, bf16.data());
  Mismatches m;
  for (size_t b = 0; b < n_blocks; ++b) {
    for (int j = 0; j < kMxfp4BlockSize; ++j) {
      const uint8_t code = element_code(&blocks[b * kMxfp4BlockBytes], j);
      double want = ref_e2m1(code) * ref_scale(scales[b]);
      if (std::fabs(want) > std::numeric_limits<float>::max()) {
        want = std::copysign(std::numeric_limits<double>::infinity(), want);
      }
      const size_t i = b * kMxfp4BlockSize + static_cast<size_t>(j);
      m.expect(same_value(want, out[i]) && same_value(want, ref_bf16(bf16[i])), [&] {
        return "block " + std::to_string(b) + " element " + std::to_string(j) + " code " +
               hex(code) + " scale " + hex(scales[b]) + ": got " + describe(out[i]) + " / bf16 " +
               hex(bf16[i]) + ", want " + describe(want);
      });
    }
  }
  QVERIFY2(m.ok(), m.report().c_str());
}

void TestMxfp4::bf16_output_is_exact_for_every_code_and_scale() {
  // Claim under test: e2m1 * 2^(e-127) is a bf16 value for every code and scale, except that
  // it can exceed bf16's (float's) range, which happens exactly for scale 254 with |x| >= 2 and
  // scale 253 with |x| >= 4; those give +-inf. The smallest, 2^-128, is a bf16 subnormal.
  const double max_bf16 = ref_bf16(0x7F7F);
  Mismatches m;
  int overflows = 0;
  for (uint32_t scale = 0; scale < 256; ++scale) {
    for (uint32_t code = 0; code < 16; ++code) {
      const auto s8 = static_cast<uint8_t>(scale);
      const auto c8 = static_cast<uint8_t>(code);
      const uint16_t got = e2m1_scaled_to_bf16(c8, s8);
      std::array<uint8_t, 16> block{};
      block.fill(static_cast<uint8_t>(code | (code << 4)));
      std::array<uint16_t, 32> via_block{};
      std::array<float, 32> via_float{};
      mxfp4_dequantize_bf16(block.data(), &s8, 1, via_block.data());
      mxfp4_dequantize(block.data(), &s8, 1, via_float.data());
      const auto describe_case = [&] { return "code " + hex(code) + " scale " + hex(scale); };
      m.expect(via_block[0] == got && via_block[31] == got, describe_case);
      if (scale == 0xFF) {
        m.expect(got == 0x7FC0 && std::isnan(via_float[5]), describe_case);
        continue;
      }
      const double want = ref_e2m1(code) * ref_scale(s8);
      m.expect(same_value(want, via_float[7]) || std::fabs(want) > max_bf16, describe_case);
      if (std::fabs(want) > max_bf16) {
        ++overflows;
        const bool expected_overflow = (scale == 254 && std::fabs(ref_e2m1(code)) >= 2) ||
                                       (scale == 253 && std::fabs(ref_e2m1(code)) >= 4);
        m.expect(expected_overflow && std::isinf(ref_bf16(got)) &&
                     std::signbit(ref_bf16(got)) == std::signbit(want),
                 describe_case);
        continue;
      }
      // Representable: a multiple of 2^max(E - 7, -133), E = floor(log2 |want|) (8 significant
      // bits for normals, units of 2^-133 for subnormals).
      if (want != 0.0) {
        const int quantum = std::max(std::ilogb(want) - 7, -133);
        const double units = std::ldexp(want, -quantum);
        m.expect(units == std::trunc(units), describe_case);
      }
      m.expect(same_value(want, ref_bf16(got)), [&] {
        return describe_case() + ": got " + hex(got) + ", want " + describe(want);
      });
    }
  }
  QVERIFY2(m.ok(), m.report().c_str());
  QCOMPARE(overflows, 2 * (4 + 2));  // scale 254: 2, 3, 4, 6; scale 253: 4, 6; both signs
  QCOMPARE(e2m1_scaled_to_bf16(0x1, 0), uint16_t{0x0020});  // 2^-128 = 32 * 2^-133
}

void TestMxfp4::quantize_rejects_bad_input() {
  std::vector<float> values(64, 1.0f);
  std::vector<uint8_t> blocks(32);
  std::vector<uint8_t> scales(2);
  day0::Status status = mxfp4_quantize(values.data(), 33, blocks.data(), scales.data());
  QCOMPARE(status.code(), day0::ErrorCode::invalid_argument);
  QVERIFY(status.message().find("33") != std::string::npos);

  values[37] = std::numeric_limits<float>::quiet_NaN();
  status = mxfp4_quantize(values.data(), 64, blocks.data(), scales.data());
  QCOMPARE(status.code(), day0::ErrorCode::invalid_argument);
  QVERIFY2(status.message().find("37") != std::string::npos, status.message().c_str());

  values[37] = -std::numeric_limits<float>::infinity();
  status = mxfp4_quantize(values.data(), 64, blocks.data(), scales.data());
  QCOMPARE(status.code(), day0::ErrorCode::invalid_argument);

  QVERIFY(mxfp4_quantize(values.data(), 0, blocks.data(), scales.data()).is_ok());
}

void TestMxfp4::quantize_matches_reference_within_error_bound() {
  std::mt19937 rng(13);
  const size_t n_blocks = 3000;
  std::vector<float> values(n_blocks * kMxfp4BlockSize);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> block_exponent(-150, 126);
  for (size_t b = 0; b < n_blocks; ++b) {
    // Each block has its own magnitude, from float subnormals to near FLT_MAX, and some blocks
    // mix in zeros, one outlier, or are all zero.
    const int e = block_exponent(rng);
    for (int j = 0; j < kMxfp4BlockSize; ++j) {
      float& x = values[b * kMxfp4BlockSize + static_cast<size_t>(j)];
      x = std::ldexp(unit(rng), e);
      if (b % 7 == 0 && j % 3 == 0) x = 0.0f;
      if (b % 11 == 0 && j == 5) x = std::ldexp(1.0f, std::min(e + 8, 127));
      if (b % 13 == 0) x = (j % 2 == 0) ? 0.0f : -0.0f;
    }
  }
  std::vector<uint8_t> blocks(n_blocks * kMxfp4BlockBytes);
  std::vector<uint8_t> scales(n_blocks);
  QVERIFY(mxfp4_quantize(values.data(), values.size(), blocks.data(), scales.data()).is_ok());
  std::vector<float> back(values.size());
  mxfp4_dequantize(blocks.data(), scales.data(), n_blocks, back.data());

  Mismatches m;
  for (size_t b = 0; b < n_blocks; ++b) {
    double amax = 0.0;
    for (int j = 0; j < kMxfp4BlockSize; ++j) {
      amax = std::max(amax, std::fabs(static_cast<double>(values[b * kMxfp4BlockSize + j])));
    }
    // OCP MX: shared exponent floor(log2 amax) - emax(E2M1) = ilogb(amax) - 2, clamped to the
    // E8M0 range; an all-zero block takes the minimum, 2^-127.
    const int shared = amax == 0.0 ? -127 : std::max(std::ilogb(amax) - 2, -127);
    m.expect(scales[b] == shared + 127, [&] {
      return "block " + std::to_string(b) + " scale " + hex(scales[b]) + ", want " +
             std::to_string(shared + 127);
    });
    for (int j = 0; j < kMxfp4BlockSize; ++j) {
      const size_t i = b * kMxfp4BlockSize + static_cast<size_t>(j);
      const double x = values[i];
      const double scaled = std::ldexp(x, -shared);
      const uint8_t want = ref_encode_e2m1(scaled);
      const uint8_t got = element_code(&blocks[b * kMxfp4BlockBytes], j);
      m.expect(got == want, [&] {
        return "value " + describe(x) + " (block " + std::to_string(b) + "): code " + hex(got) +
               ", want " + hex(want);
      });
      // Error bound: half the E2M1 spacing around |scaled| (0.5 below 2, 1 below 4, else 2),
      // or, past 6, the clipped part.
      const double a = std::fabs(scaled);
      const double spacing = a < 2.0 ? 0.5 : (a < 4.0 ? 1.0 : 2.0);
      const double bound = std::ldexp(a > 6.0 ? a - 6.0 : spacing / 2.0, shared);
      const double err = std::fabs(static_cast<double>(back[i]) - x);
      m.expect(err <= bound, [&] {
        return "value " + describe(x) + " came back as " + describe(back[i]) + ", error " +
               describe(err) + " > " + describe(bound);
      });
    }
  }
  QVERIFY2(m.ok(), m.report().c_str());
}

void TestMxfp4::representable_blocks_round_trip_exactly() {
  // A block whose largest element has E2M1 magnitude 4 or 6 (exponent field 3) fixes the scale,
  // so quantize(dequantize(block)) must give back the same bytes, signed zeros included. Scales
  // up to 252 keep 6 * 2^(s-127) finite in float.
  std::mt19937 rng(17);
  Mismatches m;
  for (int scale = 0; scale <= 252; ++scale) {
    for (int trial = 0; trial < 8; ++trial) {
      std::vector<uint8_t> block = random_bytes(rng, kMxfp4BlockBytes);
      const uint8_t top = static_cast<uint8_t>((rng() & 1) != 0 ? 0x6 : 0x7) |
                          static_cast<uint8_t>((rng() & 1) != 0 ? 0x8 : 0x0);
      const size_t where = rng() % kMxfp4BlockBytes;
      block[where] = static_cast<uint8_t>((block[where] & 0xF0) | top);
      const auto s8 = static_cast<uint8_t>(scale);
      std::array<float, 32> values{};
      mxfp4_dequantize(block.data(), &s8, 1, values.data());
      std::array<uint8_t, 16> again{};
      uint8_t scale_again = 0;
      const day0::Status status =
          mxfp4_quantize(values.data(), values.size(), again.data(), &scale_again);
      m.expect(status.is_ok() && scale_again == s8 &&
                   std::equal(again.begin(), again.end(), block.begin()),
               [&] {
                 return "scale " + std::to_string(scale) + " trial " + std::to_string(trial);
               });
    }
  }
  QVERIFY2(m.ok(), m.report().c_str());
}

void TestMxfp4::fp8_conversion_is_exact_for_every_byte_and_scale() {
  // Every scale byte 0..254 x every packed byte value: 16 blocks per scale hold bytes 0..255,
  // so every E2M1 code appears in both nibble positions under every scale.
  const size_t n_blocks = 255 * 16;
  std::vector<uint8_t> blocks(n_blocks * kMxfp4BlockBytes);
  std::vector<uint8_t> scales(n_blocks);
  for (size_t b = 0; b < n_blocks; ++b) {
    scales[b] = static_cast<uint8_t>(b / 16);
    for (int i = 0; i < kMxfp4BlockBytes; ++i) {
      blocks[b * kMxfp4BlockBytes + i] = static_cast<uint8_t>((b % 16) * 16 + i);
    }
  }
  std::vector<uint8_t> fp8(n_blocks * kMxfp4BlockSize, 0xCD);
  std::vector<int16_t> exponents(n_blocks, -999);
  QVERIFY(mxfp4_to_fp8_e4m3(blocks.data(), scales.data(), n_blocks, fp8.data(),
                            exponents.data())
              .is_ok());
  Mismatches m;
  for (size_t b = 0; b < n_blocks; ++b) {
    m.expect(exponents[b] == scales[b] - 127, [&] {
      return "block " + std::to_string(b) + " exponent " + std::to_string(exponents[b]);
    });
    for (int j = 0; j < kMxfp4BlockSize; ++j) {
      const uint8_t code = element_code(&blocks[b * kMxfp4BlockBytes], j);
      const uint8_t got = fp8[b * kMxfp4BlockSize + static_cast<size_t>(j)];
      // fp8 value * 2^exponent == e2m1 value * 2^(e - 127), exactly, in double.
      const double want = std::ldexp(ref_e2m1(code), scales[b] - 127);
      const double have = std::ldexp(ref_e4m3(got), exponents[b]);
      m.expect(same_value(want, have) && got == ref_encode_e4m3(ref_e2m1(code)), [&] {
        return "code " + hex(code) + " scale " + hex(scales[b]) + ": fp8 " + hex(got) +
               " * 2^" + std::to_string(exponents[b]) + " = " + describe(have) + ", want " +
               describe(want);
      });
    }
  }
  QVERIFY2(m.ok(), m.report().c_str());
  QCOMPARE(m.checked(), n_blocks * 33);
}

void TestMxfp4::fp8_conversion_rejects_nan_scale() {
  std::vector<uint8_t> blocks(3 * kMxfp4BlockBytes, 0x21);
  const std::array<uint8_t, 3> scales = {127, 120, 0xFF};
  std::vector<uint8_t> fp8(3 * kMxfp4BlockSize, 0xCD);
  std::array<int16_t, 3> exponents = {-999, -999, -999};
  const day0::Status status =
      mxfp4_to_fp8_e4m3(blocks.data(), scales.data(), 3, fp8.data(), exponents.data());
  QCOMPARE(status.code(), day0::ErrorCode::corrupt_data);
  QVERIFY2(status.message().find("block 2") != std::string::npos, status.message().c_str());
  QCOMPARE(exponents[0], int16_t{0});
  QCOMPARE(exponents[1], int16_t{-7});
  QCOMPARE(fp8[0], uint8_t{0x30});
  QCOMPARE(fp8[63], uint8_t{0x38});

  QVERIFY(mxfp4_to_fp8_e4m3(nullptr, nullptr, 0, nullptr, nullptr).is_ok());
}

QTEST_APPLESS_MAIN(TestMxfp4)
#include "test_mxfp4.moc"
