# The chat template interpreter (a Jinja subset, as transformers runs it) and the reasoning parser.
target_sources(day0_engine PRIVATE
  chat_template/unicode.cpp
  chat_template/value.cpp
  chat_template/lexer.cpp
  chat_template/parser.cpp
  chat_template/evaluator.cpp
  chat_template/methods.cpp
  chat_template/globals.cpp
  chat_template/filters.cpp
  chat_template/format.cpp
  chat_template/json_value.cpp
  chat_template/chat_template.cpp
  chat_template/reasoning.cpp
)
