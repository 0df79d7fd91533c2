#pragma once
// Words for full-text search. Private to knowledge/.
//
// The FTS5 table uses the porter stemmer over unicode61, which already splits snake_case
// ("sensor_reader" -> sensor, reader: '_' is not a token character) and lets "computed" find
// "compute". unicode61 keeps "parseFrame" and "HTTPServer2" as single tokens, so each chunk
// also gets a `words` column holding the parts of such identifiers ("parse frame", "http server
// 2"): a question in plain words then finds camelCase code. A separate column, rather than
// custom tokenchars, keeps the original tokens whole (searching "parseFrame" still works) and
// lets BM25 weigh the split parts lower than words that are really in the text.
//
// Chinese and Japanese are written without spaces, so unicode61 makes one token of a whole
// run of ideographs and kana ("我们使用机器学习方法"), which no question word equals. The `words`
// column therefore also holds every pair of neighbouring characters of such runs (机器 器学 学习
// ...), and a question's runs become the same pairs: overlapping bigrams, as CJK full-text
// search engines do. Hangul gets the same treatment (Korean words carry attached particles).
#include <string>
#include <string_view>
#include <vector>

namespace day0::knowledge {

// The extra `words` column for a chunk: the parts of every camelCase/PascalCase/letters+digits
// identifier in `text`, space-separated (identifiers without such humps add nothing).
std::string identifier_parts(std::string_view text);

// The CJK part of the `words` column: for every run of CJK characters (Han, kana, Hangul) in
// valid UTF-8 `text`, its overlapping character pairs, or the character itself when the run has
// one; and, for a word that mixes such a run with other letters ("GPU加速"), those other parts.
// Space-separated; empty for text without CJK characters.
std::string cjk_words(std::string_view text);

// The whole `words` column of a chunk (identifier parts and CJK words of its title, text and
// path), as the index stores it.
std::string chunk_words(std::string_view title, std::string_view text, std::string_view relative_path);

// Search terms from a free-text question: words (letters, digits and any non-ASCII), lower
// case, identifiers split as above, CJK runs as their character pairs (after the word itself),
// English stop words dropped unless nothing else remains, duplicates removed, at most
// `max_terms`.
std::vector<std::string> question_terms(std::string_view question, std::size_t max_terms = 32);

// An FTS5 MATCH expression: the terms quoted and joined by OR. Quoting makes every term a
// string (FTS5 syntax such as NEAR, AND, *, ^, :, parentheses or '-' cannot appear), and quotes
// inside terms are doubled. Empty when there are no terms.
std::string fts_query(const std::vector<std::string>& terms);

}  // namespace day0::knowledge
