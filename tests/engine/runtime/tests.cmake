day0_add_test(test_engine_session SOURCES engine/runtime/test_engine_session.cpp LABEL integration LIBS day0_engine)
day0_add_test(test_sampler SOURCES engine/runtime/test_sampler.cpp LABEL unit LIBS day0_engine_internal)
