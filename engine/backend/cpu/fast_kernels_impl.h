#pragma once
// The fast CPU kernels, written once over a vector policy and instantiated per instruction set.
// A fast_kernels_<isa>.cpp defines, inside an anonymous namespace, a struct V with
//   vec, W (floats per vector), R (tokens per register tile),
//   zero(), load(p), add(a, b), mul(a, b), fma(a, b, c) = a * b + c, set1(s), hsum(v), store(p, v),
//   mx_block(codes, half_scale, out[32 / W]): one MXFP4 block's 32 values, exact,
//   bf16_block / f16_block / f32_block(bytes, out[32 / W]): 32 stored values as floats,
//   bf16_scalar / f16_scalar(bits): one value (tails),
// then includes this file in the same anonymous namespace. Everything here must stay internal
// to that translation unit: an inline function shared between units compiled for different
// instruction sets could be linked into the wrong one.
//
// linear: each output row n is decoded from the stored bytes straight into registers, 32
// values at a time, and dotted against a tile of R tokens at once (R accumulators per vector
// position), so one decode serves R tokens and no float row is written to memory. Tokens are
// walked in blocks of kTokenTile so that a block's activations stay in the L2 cache while the
// thread's rows stream past; a row (at most a few KB) stays in L1 across the block's tiles.

constexpr std::int64_t kBlockValues = 32;
constexpr std::int64_t kTokenTile = 64;
constexpr int kVecs = static_cast<int>(kBlockValues) / V::W;  // vectors per 32-value block

inline std::int64_t min64(std::int64_t a, std::int64_t b) { return a < b ? a : b; }

// sums[r] = dot(row blocks [b0, b1), token r's activations) for r < Tile. Token r's block b is at
// x + b * 32 + r * ldx, or, Packed (block-major [b - b0][r][32], see linear_rows_blocked), at
// x + ((b - b0) * Tile + r) * 32: constant offsets from one pointer.
template <int Tile, bool Packed, class Row>
inline void dot_tile(const Row& row, std::int64_t b0, std::int64_t b1, const float* x, std::int64_t ldx, float* sums) {
  // Independent accumulators per token hide the FMA latency: all kVecs of them when one token
  // is in flight (decoding), two when the tile already supplies parallel chains.
  constexpr int A = Tile == 1 ? kVecs : (kVecs >= 2 ? 2 : 1);
  typename V::vec acc[Tile][A];
  for (int r = 0; r < Tile; ++r)
    for (int a = 0; a < A; ++a) acc[r][a] = V::zero();
  for (std::int64_t b = b0; b < b1; ++b) {
    typename V::vec w[kVecs];
    row.block(b, w);
    const float* xb = Packed ? x + (b - b0) * Tile * kBlockValues : x + b * kBlockValues;
    for (int r = 0; r < Tile; ++r)
      for (int i = 0; i < kVecs; ++i) {
        const float* xr = Packed ? xb + r * kBlockValues : xb + r * ldx;
        acc[r][i % A] = V::fma(w[i], V::load(xr + i * V::W), acc[r][i % A]);
      }
  }
  for (int r = 0; r < Tile; ++r) {
    typename V::vec s = acc[r][0];
    for (int a = 1; a < A; ++a) s = V::add(s, acc[r][a]);
    sums[r] = V::hsum(s);
  }
}

template <int Tile, class Row>
inline void store_tile(const Row& row, std::int64_t nblocks, const float* x, std::int64_t K, float b, float* y,
                       std::int64_t ldy) {
  float sums[Tile];
  dot_tile<Tile, false>(row, 0, nblocks, x, K, sums);
  for (int r = 0; r < Tile; ++r) y[r * ldy] = sums[r] + row.tail(x + r * K) + b;
}

// Prompts (many tokens): for a chunk of kChunkBlocks blocks of K and a tile of R tokens, the
// tile's activations are first packed block-major ([block][token][32], 16 KB for R = 8), so that
// every load of the FMA loop is at a fixed offset from one pointer (no per-token address
// registers) and comes from L1; then every row of the range is dotted against the packed tile,
// its chunk decoded once for the R tokens. y starts at the bias (and the products past the last
// whole block of K) and gathers each chunk's partial sums.
constexpr std::int64_t kChunkBlocks = 16;

// `valid` tokens of the tile are real; the rest of the packed tile is zeros, and their sums are
// dropped (a ragged tail costs one decode of the rows, not one per smaller tile).
template <int Tile, class RowAt>
inline void chunk_tile(const RowAt& row_at, std::int64_t n0, std::int64_t n1, std::int64_t b0, std::int64_t b1,
                       const float* x, std::int64_t K, int valid, float* packed, float* y, std::int64_t ldy) {
  for (std::int64_t b = b0; b < b1; ++b)
    for (int r = 0; r < Tile; ++r) {
      float* dst = packed + ((b - b0) * Tile + r) * kBlockValues;
      if (r < valid) std::memcpy(dst, x + r * K + b * kBlockValues, kBlockValues * sizeof(float));
      else std::memset(dst, 0, kBlockValues * sizeof(float));
    }
  float sums[Tile];
  for (std::int64_t n = n0; n < n1; ++n) {
    dot_tile<Tile, true>(row_at(n), b0, b1, packed, 0, sums);
    for (int r = 0; r < valid; ++r) y[r * ldy + n] += sums[r];
  }
}

// Not inlined into linear_rows: the decode path (one token) keeps its own code as it was.
template <class RowAt>
[[gnu::noinline]] void linear_rows_blocked(const float* x, std::int64_t T, std::int64_t K, const RowAt& row_at, const float* bias,
                                float* y, std::int64_t ldy, std::int64_t n0, std::int64_t n1) {
  const std::int64_t nblocks = K / kBlockValues;
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t n = n0; n < n1; ++n)
      y[t * ldy + n] = (bias != nullptr ? bias[n] : 0.0f) + row_at(n).tail(x + t * K);
  alignas(64) float packed[kChunkBlocks * V::R * kBlockValues];
  for (std::int64_t b0 = 0; b0 < nblocks; b0 += kChunkBlocks) {
    const std::int64_t b1 = min64(nblocks, b0 + kChunkBlocks);
    std::int64_t t = 0;
    for (; t + V::R <= T; t += V::R)
      chunk_tile<V::R>(row_at, n0, n1, b0, b1, x + t * K, K, V::R, packed, y + t * ldy, ldy);
    if (const auto rest = static_cast<int>(T - t); rest > 2) {
      chunk_tile<V::R>(row_at, n0, n1, b0, b1, x + t * K, K, rest, packed, y + t * ldy, ldy);
    } else if (rest > 0) {
      chunk_tile<2>(row_at, n0, n1, b0, b1, x + t * K, K, rest, packed, y + t * ldy, ldy);
    }
  }
}

// RowAt(n) gives row n's decoder: block(b, out) and tail(x) (the products past the last whole
// block of 32; zero for MXFP4, whose rows are whole blocks).
template <class RowAt>
inline void linear_rows(const float* x, std::int64_t T, std::int64_t K, const RowAt& row_at, const float* bias, float* y,
                        std::int64_t ldy, std::int64_t n0, std::int64_t n1) {
  const std::int64_t nblocks = K / kBlockValues;
  if (T >= 2 * V::R) return linear_rows_blocked(x, T, K, row_at, bias, y, ldy, n0, n1);
  for (std::int64_t t0 = 0; t0 < T; t0 += kTokenTile) {
    const std::int64_t t1 = min64(T, t0 + kTokenTile);
    for (std::int64_t n = n0; n < n1; ++n) {
      const auto row = row_at(n);
      const float b = bias != nullptr ? bias[n] : 0.0f;
      std::int64_t t = t0;
      for (; t + V::R <= t1; t += V::R) store_tile<V::R>(row, nblocks, x + t * K, K, b, y + t * ldy + n, ldy);
      if constexpr (V::R > 4)
        if (t + 4 <= t1) store_tile<4>(row, nblocks, x + t * K, K, b, y + t * ldy + n, ldy), t += 4;
      if (t + 2 <= t1) store_tile<2>(row, nblocks, x + t * K, K, b, y + t * ldy + n, ldy), t += 2;
      if (t < t1) store_tile<1>(row, nblocks, x + t * K, K, b, y + t * ldy + n, ldy);
    }
  }
}

struct Mxfp4Row {
  const std::uint8_t* codes;
  const std::uint8_t* scales;
  void block(std::int64_t b, typename V::vec* out) const {
    V::mx_block(codes + b * 16, V::set1(kHalfE8m0.v[scales[b]]), out);
  }
  float tail(const float*) const { return 0.0f; }
};

// Rows of 2-byte values (bf16 or f16) or floats; `Bytes` is the element size.
template <DType D>
struct PlainRow {
  const std::uint8_t* p;
  std::int64_t K;
  void block(std::int64_t b, typename V::vec* out) const {
    if constexpr (D == DType::bf16) V::bf16_block(p + b * 64, out);
    else if constexpr (D == DType::f16) V::f16_block(p + b * 64, out);
    else V::f32_block(p + b * 128, out);
  }
  float tail(const float* x) const {
    float s = 0.0f;
    for (std::int64_t k = K / kBlockValues * kBlockValues; k < K; ++k) s += x[k] * value(k);
    return s;
  }
  float value(std::int64_t k) const {
    if constexpr (D == DType::f32) {
      float v;
      std::memcpy(&v, p + 4 * k, 4);
      return v;
    } else {
      std::uint16_t bits;
      std::memcpy(&bits, p + 2 * k, 2);
      if constexpr (D == DType::bf16) return V::bf16_scalar(bits);
      else return V::f16_scalar(bits);
    }
  }
};

template <DType D>
void linear_plain(const float* x, std::int64_t T, const Matrix& w, const float* bias, float* y, std::int64_t ldy,
                  std::int64_t n0, std::int64_t n1) {
  const std::int64_t K = w.cols, row_bytes = K * (D == DType::f32 ? 4 : 2);
  linear_rows(x, T, K, [&](std::int64_t n) { return PlainRow<D>{w.data + n * row_bytes, K}; }, bias, y, ldy, n0, n1);
}

void linear(const float* x, std::int64_t T, const Matrix& w, const float* bias, float* y, std::int64_t ldy,
            std::int64_t n0, std::int64_t n1) {
  switch (w.dtype) {
    case DType::bf16: return linear_plain<DType::bf16>(x, T, w, bias, y, ldy, n0, n1);
    case DType::f16: return linear_plain<DType::f16>(x, T, w, bias, y, ldy, n0, n1);
    default: return linear_plain<DType::f32>(x, T, w, bias, y, ldy, n0, n1);  // callers pass f32 or the above
  }
}

void linear_mxfp4(const float* x, std::int64_t T, const Mxfp4Matrix& w, const float* bias, float* y, std::int64_t ldy,
                  std::int64_t n0, std::int64_t n1) {
  const std::int64_t nblocks = w.cols / kBlockValues;
  linear_rows(
      x, T, w.cols, [&](std::int64_t n) { return Mxfp4Row{w.blocks + n * nblocks * 16, w.scales + n * nblocks}; },
      bias, y, ldy, n0, n1);
}

template <DType D>
void decode_plain(const Matrix& m, std::int64_t r, float* out) {
  const std::int64_t K = m.cols;
  const PlainRow<D> row{m.data + r * K * (D == DType::f32 ? 4 : 2), K};
  std::int64_t b = 0;
  for (; (b + 1) * kBlockValues <= K; ++b) {
    typename V::vec v[kVecs];
    row.block(b, v);
    for (int i = 0; i < kVecs; ++i) V::store(out + b * kBlockValues + i * V::W, v[i]);
  }
  for (std::int64_t k = b * kBlockValues; k < K; ++k) out[k] = row.value(k);
}

void decode_row(const Matrix& m, std::int64_t r, float* out) {
  switch (m.dtype) {
    case DType::bf16: return decode_plain<DType::bf16>(m, r, out);
    case DType::f16: return decode_plain<DType::f16>(m, r, out);
    case DType::f32: return decode_plain<DType::f32>(m, r, out);
    default: return reference::decode_row(m, r, out);
  }
}

void decode_row_mxfp4(const Mxfp4Matrix& m, std::int64_t r, float* out) {
  const std::int64_t nblocks = m.cols / kBlockValues;
  const Mxfp4Row row{m.blocks + r * nblocks * 16, m.scales + r * nblocks};
  for (std::int64_t b = 0; b < nblocks; ++b) {
    typename V::vec v[kVecs];
    row.block(b, v);
    for (int i = 0; i < kVecs; ++i) V::store(out + b * kBlockValues + i * V::W, v[i]);
  }
}

float dot(const float* a, const float* b, std::int64_t n) {
  typename V::vec acc[4] = {V::zero(), V::zero(), V::zero(), V::zero()};
  std::int64_t i = 0;
  for (; i + 4 * V::W <= n; i += 4 * V::W)
    for (int j = 0; j < 4; ++j) acc[j] = V::fma(V::load(a + i + j * V::W), V::load(b + i + j * V::W), acc[j]);
  for (; i + V::W <= n; i += V::W) acc[0] = V::fma(V::load(a + i), V::load(b + i), acc[0]);
  float tail = 0.0f;
  for (; i < n; ++i) tail += a[i] * b[i];
  return V::hsum(V::add(V::add(acc[0], acc[1]), V::add(acc[2], acc[3]))) + tail;
}

void axpy(float a, const float* x, float* y, std::int64_t n) {
  const typename V::vec va = V::set1(a);
  std::int64_t i = 0;
  for (; i + V::W <= n; i += V::W) V::store(y + i, V::fma(va, V::load(x + i), V::load(y + i)));
  for (; i < n; ++i) y[i] += a * x[i];
}

const FastKernels kTable{&linear, &linear_mxfp4, &decode_row, &decode_row_mxfp4, &dot, &axpy};
