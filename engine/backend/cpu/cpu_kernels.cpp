#include "backend/cpu/cpu_kernels.h"

#include <atomic>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "backend/cpu/cpu_ops.h"
#include "backend/cpu/fast_kernels.h"

namespace day0::cpu {
namespace detail {

namespace {
constexpr HalfE8m0Table make_half_e8m0() {
  HalfE8m0Table t{};
  // 2^(e - 128): a normal float for e >= 2 (biased exponent e - 1), subnormal for e = 1, 0.
  t.v[0] = std::bit_cast<float>(0x00200000u);
  t.v[1] = std::bit_cast<float>(0x00400000u);
  for (std::uint32_t e = 2; e < 255; ++e) t.v[e] = std::bit_cast<float>((e - 1) << 23);
  t.v[255] = std::numeric_limits<float>::quiet_NaN();
  return t;
}
}  // namespace

constexpr HalfE8m0Table kHalfE8m0 = make_half_e8m0();

}  // namespace detail

namespace {

Isa detect_best() {
#if defined(DAY0_CPU_X86)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
  if (avx2 && __builtin_cpu_supports("avx512f")) return Isa::avx512;
  if (avx2) return Isa::avx2;
#endif
  return Isa::portable;
}

const detail::FastKernels& table_for(Isa isa) {
#if defined(DAY0_CPU_X86)
  if (isa == Isa::avx512) return detail::avx512_kernels();
  if (isa == Isa::avx2) return detail::avx2_kernels();
#endif
  (void)isa;
  return detail::portable_kernels();
}

struct Selection {
  std::atomic<KernelSet> set{KernelSet::fast};
  std::atomic<Isa> isa{Isa::portable};
  std::atomic<const detail::FastKernels*> table{nullptr};
  Isa best = Isa::portable;

  Selection() {
    best = detect_best();
    Isa chosen = best;
    if (const char* cap = std::getenv("DAY0_CPU_ISA")) {
      if (std::strcmp(cap, "portable") == 0) chosen = Isa::portable;
      else if (std::strcmp(cap, "avx2") == 0 && best >= Isa::avx2) chosen = Isa::avx2;
    }
    isa.store(chosen);
    table.store(&table_for(chosen));
    if (const char* s = std::getenv("DAY0_CPU_KERNELS"); s != nullptr && std::strcmp(s, "reference") == 0)
      set.store(KernelSet::reference);
  }
};

Selection& selection() {
  static Selection s;
  return s;
}

const detail::FastKernels& table() { return *selection().table.load(std::memory_order_relaxed); }
bool use_fast() { return selection().set.load(std::memory_order_relaxed) == KernelSet::fast; }

bool fast_dtype(DType d) { return d == DType::bf16 || d == DType::f16 || d == DType::f32; }

// Rows per chunk so that a chunk holds at least ~64K multiply-adds (threads are not woken for
// less), contiguous so that each thread streams its own span of the matrix.
std::size_t row_grain(std::int64_t K, std::int64_t T) {
  const std::int64_t work = std::max<std::int64_t>(1, K * std::min<std::int64_t>(T, 64));
  return static_cast<std::size_t>(std::max<std::int64_t>(1, 65536 / work));
}

const float* decoded_bias(const Matrix* bias, std::int64_t n) {
  if (bias == nullptr) return nullptr;
  thread_local std::vector<float> values;
  values.resize(static_cast<std::size_t>(n));
  table().decode_row(Matrix{bias->dtype, bias->data, 1, n}, 0, values.data());
  return values.data();
}

}  // namespace

KernelSet kernel_set() { return selection().set.load(); }
void set_kernel_set(KernelSet set) { selection().set.store(set); }
Isa kernel_isa() { return selection().isa.load(); }
Isa best_isa() { return selection().best; }

Isa set_kernel_isa(Isa isa) {
  Selection& s = selection();
  if (isa > s.best) isa = s.best;
  s.isa.store(isa);
  s.table.store(&table_for(isa));
  return isa;
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::avx512: return "avx512";
    case Isa::avx2: return "avx2";
    default: return "portable";
  }
}

std::string kernel_description() {
  if (kernel_set() == KernelSet::reference) return "reference";
  return std::string("fast (") + isa_name(kernel_isa()) + ")";
}

namespace fast {

void decode_row(const Matrix& m, std::int64_t row, float* out) { table().decode_row(m, row, out); }
void decode_row(const Mxfp4Matrix& m, std::int64_t row, float* out) { table().decode_row_mxfp4(m, row, out); }
float dot(const float* a, const float* b, std::int64_t n) { return table().dot(a, b, n); }
void axpy(float a, const float* x, float* y, std::int64_t n) { table().axpy(a, x, y, n); }

void linear(ThreadPool& pool, const float* x, std::int64_t T, const Matrix& w, const Matrix* bias, float* y) {
  if (!fast_dtype(w.dtype)) return reference::linear(pool, x, T, w, bias, y);
  const auto& k = table();
  const float* b = decoded_bias(bias, w.rows);
  pool.parallel_for(static_cast<std::size_t>(w.rows), row_grain(w.cols, T), [&](std::size_t begin, std::size_t end) {
    k.linear(x, T, w, b, y, w.rows, static_cast<std::int64_t>(begin), static_cast<std::int64_t>(end));
  });
}

void linear(ThreadPool& pool, const float* x, std::int64_t T, const Mxfp4Matrix& w, const Matrix* bias, float* y) {
  const auto& k = table();
  const float* b = decoded_bias(bias, w.rows);
  pool.parallel_for(static_cast<std::size_t>(w.rows), row_grain(w.cols, T), [&](std::size_t begin, std::size_t end) {
    k.linear_mxfp4(x, T, w, b, y, w.rows, static_cast<std::int64_t>(begin), static_cast<std::int64_t>(end));
  });
}

}  // namespace fast

void decode_row(const Matrix& m, std::int64_t row, float* out) {
  use_fast() ? fast::decode_row(m, row, out) : reference::decode_row(m, row, out);
}
void decode_row(const Mxfp4Matrix& m, std::int64_t row, float* out) {
  use_fast() ? fast::decode_row(m, row, out) : reference::decode_row(m, row, out);
}
void linear(ThreadPool& pool, const float* x, std::int64_t T, const Matrix& w, const Matrix* bias, float* y) {
  use_fast() ? fast::linear(pool, x, T, w, bias, y) : reference::linear(pool, x, T, w, bias, y);
}
void linear(ThreadPool& pool, const float* x, std::int64_t T, const Mxfp4Matrix& w, const Matrix* bias, float* y) {
  use_fast() ? fast::linear(pool, x, T, w, bias, y) : reference::linear(pool, x, T, w, bias, y);
}
float dot(const float* a, const float* b, std::int64_t n) {
  return use_fast() ? fast::dot(a, b, n) : reference::dot(a, b, n);
}
void axpy(float a, const float* x, float* y, std::int64_t n) {
  use_fast() ? fast::axpy(a, x, y, n) : reference::axpy(a, x, y, n);
}

}  // namespace day0::cpu
