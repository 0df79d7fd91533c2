# glm5_next (GLM-5.3-Flash) on the CPU: the model and the blocks it adds (KDA lives in
# blocks/sources.cmake).
target_sources(day0_engine PRIVATE
  models/glm5_next_config.cpp
  models/glm5_next_model.cpp
  models/glm5_next_weights.cpp
  models/glm5_next_quantize.cpp
  blocks/hyper_connection.cpp
  blocks/mla_attention.cpp
  blocks/dsa_indexer.cpp
  blocks/moe.cpp
)
