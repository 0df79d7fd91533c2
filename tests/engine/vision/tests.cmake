# Vision tests (paths relative to tests/), included by tests/CMakeLists.txt.
day0_add_test(test_image_decode
  SOURCES engine/vision/test_image_decode.cpp engine/vision/image_bytes.cpp
  LABEL unit LIBS day0_engine_internal)
target_include_directories(test_image_decode PRIVATE ${STB_INCLUDE_DIR})
day0_add_test(test_vision_preprocess
  SOURCES engine/vision/test_vision_preprocess.cpp
  LABEL unit LIBS day0_engine_internal)
day0_add_test(test_vision_tower
  SOURCES engine/vision/test_vision_tower.cpp
  LABEL unit LIBS day0_engine_internal)
day0_add_test(test_vision_reference
  SOURCES engine/vision/test_vision_reference.cpp
  LABEL unit LIBS day0_engine_internal)
day0_add_test(test_image_cli
  SOURCES engine/vision/test_image_cli.cpp engine/vision/image_bytes.cpp
  LABEL integration LIBS day0_engine_internal)
add_dependencies(test_image_cli day0-cli)
day0_add_test(test_image_engine
  SOURCES engine/vision/test_image_engine.cpp engine/vision/image_bytes.cpp
  LABEL integration LIBS day0_engine_internal)
add_dependencies(test_image_engine day0-cli)
