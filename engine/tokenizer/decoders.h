#pragma once
// tokenizer.json "decoder": ByteLevel, Metaspace, ByteFallback, Fuse, Strip, Replace and
// Sequence, each a port of tokenizers' decode_chain (token strings in, token strings out), plus
// a streaming form of the same chain built from StreamStages.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tokenizer/json_read.h"
#include "tokenizer/regex.h"

namespace day0::tokenizer {

// One stage of a streaming decode. Stages before the first fusing one (Fuse, ByteLevel) see whole
// tokens; later ones see fragments of the single fused token.
class StreamStage {
 public:
  virtual ~StreamStage() = default;
  // Takes the next token (or fragment) and appends what is settled to `out`.
  virtual void push(std::string token, std::vector<std::string>& out) = 0;
  // End of input: appends everything held back.
  virtual void finish(std::vector<std::string>& out) = 0;
};

struct DecoderSpec;  // parsed form, shared by the batch and streaming decoders

class DecoderPipeline {
 public:
  static Result<DecoderPipeline> parse(const json& j, const std::string& path);

  // tokenizers' decode: the chain, then the pieces joined ("" with a decoder, " " without).
  Result<std::string> decode(std::vector<std::string> tokens) const;
  // Streaming stages for this chain, or an empty vector when some stage cannot settle text
  // before the end (then a stream holds everything until flush).
  std::vector<std::unique_ptr<StreamStage>> make_stream() const;
  bool streamable() const;
  bool has_decoder() const { return !specs_.empty() || explicit_; }

 private:
  std::vector<std::shared_ptr<const DecoderSpec>> specs_;  // flattened Sequence
  bool explicit_ = false;                                  // a decoder was given (maybe an empty Sequence)
};

}  // namespace day0::tokenizer
