# The tokenizer: Hugging Face tokenizer.json (BPE), included by engine/CMakeLists.txt.
# ICU provides Unicode normalization (NFC/NFKC/...), case mapping and character properties.
find_package(ICU REQUIRED COMPONENTS uc)
target_sources(day0_engine PRIVATE
  tokenizer/unicode.cpp
  tokenizer/regex.cpp
  tokenizer/byte_level.cpp
  tokenizer/json_read.cpp
  tokenizer/normalized.cpp
  tokenizer/normalizers.cpp
  tokenizer/pre_tokenizers.cpp
  tokenizer/bpe.cpp
  tokenizer/added_vocabulary.cpp
  tokenizer/post_processors.cpp
  tokenizer/decoders.cpp
  tokenizer/tokenizer.cpp
  tokenizer/stream_decoder.cpp
)
target_link_libraries(day0_engine PRIVATE ICU::uc)
