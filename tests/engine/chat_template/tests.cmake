# Chat templates: golden renderings from transformers, features, hostile input, reasoning.
day0_add_test(test_chat_template_corpus SOURCES engine/chat_template/test_chat_template_corpus.cpp
  LABEL unit LIBS day0_engine_internal)
