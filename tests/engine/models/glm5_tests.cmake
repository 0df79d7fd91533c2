# glm5_next (GLM-5.3-Flash) on the CPU: reference fixtures, sessions, hostile inputs, MXFP4.
day0_add_test(test_glm5_next_reference SOURCES engine/models/test_glm5_next_reference.cpp
  engine/safetensors_writer.cpp LABEL integration LIBS day0_engine_internal)
day0_add_test(test_glm5_next_inputs SOURCES engine/models/test_glm5_next_inputs.cpp
  LABEL integration LIBS day0_engine_internal)
add_dependencies(test_glm5_next_inputs day0-cli)
day0_add_test(test_glm5_next_session SOURCES engine/models/test_glm5_next_session.cpp
  LABEL integration LIBS day0_engine)
