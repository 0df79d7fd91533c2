# Chat templates: golden renderings from transformers, features, hostile input, reasoning.
day0_add_test(test_chat_template_corpus SOURCES engine/chat_template/test_chat_template_corpus.cpp
  LABEL unit LIBS day0_engine_internal)
day0_add_test(test_template_cli SOURCES engine/chat_template/test_template_cli.cpp LABEL integration
  LIBS day0_engine_internal Qt6::Core)
add_dependencies(test_template_cli day0-cli)
day0_add_test(test_chat_template_hostile SOURCES engine/chat_template/test_chat_template_hostile.cpp
  LABEL unit LIBS day0_engine_internal)
day0_add_test(test_reasoning SOURCES engine/chat_template/test_reasoning.cpp LABEL unit LIBS day0_engine_internal)
day0_add_test(test_chat_template_semantics SOURCES engine/chat_template/test_chat_template_semantics.cpp
  LABEL unit LIBS day0_engine_internal)
