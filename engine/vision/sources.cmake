# Image decoding and the vision pipeline (paths relative to engine/), included by engine/CMakeLists.txt.
target_sources(day0_engine PRIVATE
  io/image_decode.cpp
  vision/glm5_vision_preprocess.cpp
  vision/glm5_vision.cpp
  vision/glm5_vision_tower.cpp
  vision/image_input.cpp
  vision/image_prompt.cpp)
target_include_directories(day0_engine PRIVATE ${STB_INCLUDE_DIR})
