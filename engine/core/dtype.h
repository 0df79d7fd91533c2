#pragma once
// Element types of stored tensors: every dtype of the safetensors format.
#include <cstdint>
#include <optional>
#include <string_view>

namespace day0 {

enum class DType : std::uint8_t {
  boolean, u8, i8, i16, u16, i32, u32, i64, u64,
  f16, bf16, f32, f64, c64,
  f8_e4m3, f8_e5m2, f8_e8m0,
  f4,       // packed E2M1, two per byte
  f6_e2m3,  // packed 6-bit floats
  f6_e3m2,
};

// Size of one element in bits (4 and 6 for the packed sub-byte types).
int dtype_bits(DType dtype);
// The safetensors spelling: "BF16", "F8_E4M3", "U8", ...
std::string_view dtype_name(DType dtype);
std::optional<DType> dtype_from_safetensors(std::string_view name);

}  // namespace day0
