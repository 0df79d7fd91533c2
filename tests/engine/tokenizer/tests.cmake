# Tokenizer tests (paths relative to tests/), included by tests/CMakeLists.txt.
day0_add_test(test_tokenizer_reference
  SOURCES engine/tokenizer/test_tokenizer_reference.cpp engine/tokenizer/fixtures.cpp
  LABEL unit LIBS day0_engine_internal)
day0_add_test(test_tokenizer_hostile
  SOURCES engine/tokenizer/test_tokenizer_hostile.cpp engine/tokenizer/fixtures.cpp
  LABEL unit LIBS day0_engine_internal)
day0_add_test(test_tokenizer_stream
  SOURCES engine/tokenizer/test_tokenizer_stream.cpp engine/tokenizer/fixtures.cpp
  LABEL unit LIBS day0_engine_internal)
day0_add_test(test_tokenize_cli
  SOURCES engine/tokenizer/test_tokenize_cli.cpp engine/tokenizer/fixtures.cpp
  LABEL integration LIBS nlohmann_json::nlohmann_json)
add_dependencies(test_tokenize_cli day0-cli)
