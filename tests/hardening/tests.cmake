# Hardening: the malformed-model corpus through the CLI and the app, memory plan and request
# limits, and the soak runs. Paths are relative to tests/.
day0_add_test(test_malformed_cli
  SOURCES hardening/test_malformed_cli.cpp hardening/malformed_cases.cpp hardening/model_mutations.cpp
    engine/safetensors_writer.cpp
  LABEL integration LIBS day0_engine_internal)
add_dependencies(test_malformed_cli day0-cli)
if(DAY0_BUILD_GUI)
  day0_add_test(test_malformed_app
    SOURCES hardening/test_malformed_app.cpp hardening/malformed_cases.cpp hardening/model_mutations.cpp
      engine/safetensors_writer.cpp
    LABEL integration LIBS day0_app day0_engine_internal)
endif()
day0_add_test(test_limits
  SOURCES hardening/test_limits.cpp hardening/malformed_cases.cpp hardening/model_mutations.cpp
    engine/safetensors_writer.cpp
  LABEL integration LIBS day0_engine_internal)
day0_add_test(test_soak_engine SOURCES hardening/test_soak_engine.cpp hardening/malformed_cases.cpp
  hardening/model_mutations.cpp engine/safetensors_writer.cpp LABEL integration LIBS day0_engine_internal)
set_tests_properties(test_soak_engine PROPERTIES LABELS "integration;soak")
if(DAY0_BUILD_GUI)
  day0_add_test(test_soak_app SOURCES hardening/test_soak_app.cpp hardening/malformed_cases.cpp
    hardening/model_mutations.cpp engine/safetensors_writer.cpp LABEL integration LIBS day0_app day0_engine_internal)
  set_tests_properties(test_soak_app PROPERTIES LABELS "integration;soak")
endif()
