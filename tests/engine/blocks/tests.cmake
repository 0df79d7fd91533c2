day0_add_test(test_kda_numerics SOURCES engine/blocks/test_kda_numerics.cpp engine/blocks/kda_fixture.cpp
  engine/safetensors_writer.cpp LABEL unit LIBS day0_engine_internal)
day0_add_test(test_kda_binding SOURCES engine/blocks/test_kda_binding.cpp engine/blocks/kda_fixture.cpp
  engine/safetensors_writer.cpp LABEL unit LIBS day0_engine_internal)
day0_add_test(test_kda_transformers SOURCES engine/blocks/test_kda_transformers.cpp LABEL unit
  LIBS day0_engine_internal)
