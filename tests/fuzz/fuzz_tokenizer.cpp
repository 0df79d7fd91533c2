// tokenizer.json, then encoding and decoding. The input is `tokenizer.json` NUL `text`: JSON never
// holds a raw NUL, so the fuzzer controls both halves (no NUL: the whole input is the JSON and a
// fixed text is encoded). Checks what day0/tokenizer.h promises: encoding any bytes works (or
// fails with a message), decoding any ids (known or not) works, and the stream decoder's pieces
// add up to decode(ids).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "day0/tokenizer.h"
#include "fuzz/fuzz_check.h"

namespace {

constexpr std::string_view kDefaultText = "Hello world! 東京 <|start|> 123\n\t  x\xff\xfe";

void check_stream(const day0::Tokenizer& tok, const std::vector<std::uint32_t>& ids, bool skip_special) {
  day0::StreamDecoder stream(tok, skip_special);
  std::string pieces;
  for (const auto id : ids) pieces += stream.feed(id);
  pieces += stream.flush();
  DAY0_FUZZ_CHECK(pieces == tok.decode(ids, skip_special), "stream pieces differ from decode()");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto nul = input.find('\0');
  const std::string_view json = input.substr(0, nul);
  const std::string_view text = nul == std::string_view::npos ? kDefaultText : input.substr(nul + 1);

  auto tok = day0::Tokenizer::from_json(json, "tokenizer.json");
  if (!tok) {
    DAY0_FUZZ_CHECK(!tok.status().message().empty(), "an error needs a message");
    return 0;
  }
  const std::size_t vocab = tok->vocab_size();
  for (const bool special : {false, true}) {
    auto ids = tok->encode(text, special);
    if (!ids) {
      DAY0_FUZZ_CHECK(!ids.status().message().empty(), "an error needs a message");
      continue;
    }
    // The post-processor's template ids come from the file as they are (as in `tokenizers`);
    // everything else is a vocabulary or added-token id.
    if (!special)
      for (const auto id : *ids) DAY0_FUZZ_CHECK(id < vocab, "an id past vocab_size()");
    DAY0_FUZZ_CHECK(tok->id_strings(*ids).size() == ids->size(), "one string per id");
    check_stream(*tok, *ids, false);
    check_stream(*tok, *ids, true);
  }
  // Arbitrary ids, known and unknown, from the text's bytes.
  std::vector<std::uint32_t> ids;
  for (std::size_t i = 0; i + 2 <= text.size() && ids.size() < 256; i += 2) {
    std::uint16_t v;
    std::memcpy(&v, text.data() + i, 2);
    ids.push_back(static_cast<std::uint32_t>(v % (vocab + 8)));
  }
  (void)tok->id_strings(ids);
  for (const auto id : ids) {
    (void)tok->id_to_token(id);
    (void)tok->is_special(id);
  }
  check_stream(*tok, ids, false);
  check_stream(*tok, ids, true);
  (void)tok->token_to_id(text.substr(0, std::min<std::size_t>(text.size(), 16)));
  return 0;
}
