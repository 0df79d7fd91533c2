# Tokenizer tests (paths relative to tests/), included by tests/CMakeLists.txt.
day0_add_test(test_tokenizer_reference
  SOURCES engine/tokenizer/test_tokenizer_reference.cpp engine/tokenizer/fixtures.cpp
  LABEL unit LIBS day0_engine_internal)
