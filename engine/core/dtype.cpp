#include "core/dtype.h"

#include <array>
#include <utility>

namespace day0 {
namespace {

struct DTypeRow {
  DType dtype;
  std::string_view name;
  int bits;
};

constexpr std::array<DTypeRow, 20> kRows{{
    {DType::boolean, "BOOL", 8},   {DType::u8, "U8", 8},          {DType::i8, "I8", 8},
    {DType::i16, "I16", 16},       {DType::u16, "U16", 16},       {DType::i32, "I32", 32},
    {DType::u32, "U32", 32},       {DType::i64, "I64", 64},       {DType::u64, "U64", 64},
    {DType::f16, "F16", 16},       {DType::bf16, "BF16", 16},     {DType::f32, "F32", 32},
    {DType::f64, "F64", 64},       {DType::c64, "C64", 64},       {DType::f8_e4m3, "F8_E4M3", 8},
    {DType::f8_e5m2, "F8_E5M2", 8}, {DType::f8_e8m0, "F8_E8M0", 8}, {DType::f4, "F4", 4},
    {DType::f6_e2m3, "F6_E2M3", 6}, {DType::f6_e3m2, "F6_E3M2", 6},
}};

const DTypeRow& row(DType dtype) {
  for (const auto& r : kRows)
    if (r.dtype == dtype) return r;
  return kRows[0];
}

}  // namespace

int dtype_bits(DType dtype) { return row(dtype).bits; }
std::string_view dtype_name(DType dtype) { return row(dtype).name; }

std::optional<DType> dtype_from_safetensors(std::string_view name) {
  for (const auto& r : kRows)
    if (r.name == name) return r.dtype;
  return std::nullopt;
}

}  // namespace day0
