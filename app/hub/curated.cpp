#include "hub/curated.h"

namespace day0::hub {

const std::vector<CuratedModel>& curated_models() {
  static const std::vector<CuratedModel> models = {
      {"openai/gpt-oss-20b", "gpt-oss-20b", "gpt_oss", "gpt-oss-20b-shape.config.json", 13761264768, 20914757184,
       3608307264, "MXFP4 experts as released; runs on the CPU and on one GPU"},
      {"openai/gpt-oss-120b", "gpt-oss-120b", "gpt_oss", "gpt-oss-120b-shape.config.json", 65248815744, 116829156672,
       5132849472, "MXFP4 experts as released; one 80 GB GPU or a large-memory CPU"},
      {"zai-org/GLM-5.3-Flash", "GLM-5.3-Flash", "glm5_next", "glm-5.3-flash-shape.config.json", 627573768828,
       313786884414, 16742333246, "text and images; needs several hundred GB of memory on the CPU"},
  };
  return models;
}

}  // namespace day0::hub
