day0_add_test(test_gpt_oss_reference SOURCES engine/models/test_gpt_oss_reference.cpp LABEL integration LIBS day0_engine)
day0_add_test(test_expert_locations SOURCES engine/models/test_expert_locations.cpp LABEL unit LIBS day0_engine_internal)
day0_add_test(test_expert_store SOURCES engine/models/test_expert_store.cpp LABEL unit LIBS day0_engine_internal)
