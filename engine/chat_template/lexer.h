#pragma once
// The template lexer: jinja2's lexer rules under transformers' environment (trim_blocks,
// lstrip_blocks, `-`/`+` whitespace markers, raw blocks, one trailing newline dropped, \r\n and
// \r read as \n). Strings are unescaped as Python's unicode-escape does.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace day0::chat_template {

enum class Tok : std::uint8_t {
  data,            // template text
  variable_begin,  // {{
  variable_end,    // }}
  block_begin,     // {%
  block_end,       // %}
  name,
  string,
  integer,
  floating,
  op,  // value holds the operator: + - * / // % ** ~ [ ] ( ) { } == != > >= < <= = . : | , ;
  eof,
};

struct Token {
  Tok type = Tok::eof;
  std::string value;  // data, name, unescaped string, operator
  std::int64_t int_value = 0;
  double float_value = 0.0;
  std::uint32_t offset = 0;  // byte offset into the normalized source (for line/column)
};

struct LexedTemplate {
  std::string source;  // normalized (newlines as \n, one trailing newline dropped)
  std::vector<Token> tokens;
  // 1-based line and column (in code points) of a byte offset.
  void position(std::uint32_t offset, int* line, int* column) const;
};

// Throws TemplateError (syntax) with the position on malformed input.
LexedTemplate lex(std::string_view source);

}  // namespace day0::chat_template
