// safetensors header and model.safetensors.index.json. The input is a whole .safetensors file
// (the file size is the input's) and, read as text, an index file. What the parser accepts must
// keep the promises of io/safetensors.h: tensors in offset order, contiguous from 0 inside the
// data section, each tensor's bytes equal to shape x dtype, the data section ending at the end of
// the file.
#include <algorithm>
#include <cstdint>
#include <span>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "io/checkpoint.h"
#include "io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace day0;
  const std::span<const std::uint8_t> bytes(data, size);
  auto header = io::parse_safetensors_header(bytes, size, "fuzz.safetensors");
  if (header) {
    const auto& h = header.value();
    DAY0_FUZZ_CHECK(h.data_offset == 8 + h.header_bytes, "data offset");
    DAY0_FUZZ_CHECK(h.data_offset + h.data_bytes == size, "data section must end at the end of the file");
    std::uint64_t next = 0;
    for (const auto& t : h.tensors) {
      DAY0_FUZZ_CHECK(t.begin == next && t.begin <= t.end && t.end <= h.data_bytes, "offsets of " + t.name);
      std::uint64_t numel = 1;
      for (const auto d : t.shape) numel *= d;
      DAY0_FUZZ_CHECK(numel == t.numel, "numel of " + t.name);
      const auto bits = static_cast<std::uint64_t>(dtype_bits(t.dtype));
      DAY0_FUZZ_CHECK(numel * bits == t.nbytes() * 8, "byte size of " + t.name);
      next = t.end;
    }
    DAY0_FUZZ_CHECK(next == h.data_bytes, "tensors must fill the data section");
  } else {
    DAY0_FUZZ_CHECK(!header.status().message().empty(), "an error needs a message");
  }

  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto index = io::parse_checkpoint_index(text, "model.safetensors.index.json");
  if (index) {
    for (const auto& [tensor, shard] : index->weight_map) {
      DAY0_FUZZ_CHECK(!shard.empty() && shard.find('/') == std::string::npos && shard != "." && shard != "..",
                      "unsafe shard name " + shard);
      DAY0_FUZZ_CHECK(std::binary_search(index->shards.begin(), index->shards.end(), shard), "shard list");
    }
  } else {
    DAY0_FUZZ_CHECK(!index.status().message().empty(), "an error needs a message");
  }
  return 0;
}
