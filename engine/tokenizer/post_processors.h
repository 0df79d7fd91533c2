#pragma once
// tokenizer.json "post_processor": TemplateProcessing, ByteLevel (offsets only: ids unchanged),
// RobertaProcessing, BertProcessing and Sequence, for single sequences. Any other type is refused.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tokenizer/json_read.h"

namespace day0::tokenizer {

class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  // Wraps the ids of one sequence when `add_special_tokens`.
  virtual void process(std::vector<std::uint32_t>& ids, bool add_special_tokens) const = 0;
};

Result<std::unique_ptr<PostProcessor>> parse_post_processor(const json& j, const std::string& path, int depth = 0);

}  // namespace day0::tokenizer
