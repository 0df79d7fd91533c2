#pragma once
// Where each routed expert's bytes lie in a checkpoint's shards, from the architecture's manifest
// (ExpectedTensor::layer / expert): what an expert store reads with pread, and what a plan that
// splits experts over GPUs or a cache counts. An expert is one contiguous byte range in each of
// its tensors: the e-th slice of a tensor that stacks the layer's experts along its first
// dimension (gpt-oss, MXFP4 glm5_next), or the whole of a tensor of its own (bf16 glm5_next).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "day0/status.h"
#include "io/checkpoint.h"
#include "models/architecture.h"

namespace day0::models {

struct ExpertByteRange {
  std::size_t shard = 0;     // index into Checkpoint::shards()
  std::uint64_t offset = 0;  // absolute offset in the shard file
  std::uint64_t length = 0;
  std::string tensor;        // the checkpoint tensor the range belongs to
};

struct ExpertLocation {
  std::int32_t layer = 0;
  std::int32_t expert = 0;
  std::vector<ExpertByteRange> ranges;  // in the manifest's tensor order
  std::uint64_t bytes = 0;              // sum of the ranges' lengths
};

// Every routed expert of the checkpoint, ordered by (layer, expert). A routed-expert tensor of the
// manifest that the checkpoint lacks, or whose stored shape differs from the manifest's, is an
// error naming it.
Result<std::vector<ExpertLocation>> expert_locations(const io::Checkpoint& checkpoint,
                                                     std::span<const ExpectedTensor> manifest);

}  // namespace day0::models
