#include "tokenizer/unicode.h"

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/ustring.h>

namespace day0::tokenizer {

std::uint32_t next_code_point(std::string_view s, std::size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    ++i;
    return b0;
  }
  const std::size_t n = utf8_length(b0);
  std::uint32_t cp = n == 2 ? (b0 & 0x1F) : n == 3 ? (b0 & 0x0F) : (b0 & 0x07);
  for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  i += n;
  return cp;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

namespace {

// For a lead byte: how many continuation bytes follow and the allowed range of the first one
// (Unicode Table 3-7, well-formed UTF-8). need == 0 marks a byte that can never start a sequence.
struct Lead {
  int need;
  unsigned char lo, hi;
};

Lead lead_of(unsigned char b) {
  if (b >= 0xC2 && b <= 0xDF) return {1, 0x80, 0xBF};
  if (b == 0xE0) return {2, 0xA0, 0xBF};
  if (b == 0xED) return {2, 0x80, 0x9F};
  if (b >= 0xE1 && b <= 0xEF) return {2, 0x80, 0xBF};
  if (b == 0xF0) return {3, 0x90, 0xBF};
  if (b >= 0xF1 && b <= 0xF3) return {3, 0x80, 0xBF};
  if (b == 0xF4) return {3, 0x80, 0x8F};
  return {0, 0, 0};
}

// Valid continuation bytes after the lead at `i` (stops at the first invalid one or the end).
int continuation_count(std::string_view s, std::size_t i, const Lead& lead) {
  int c = 0;
  for (; c < lead.need && i + 1 + c < s.size(); ++c) {
    const auto b = static_cast<unsigned char>(s[i + 1 + c]);
    const bool ok = c == 0 ? (b >= lead.lo && b <= lead.hi) : (b >= 0x80 && b <= 0xBF);
    if (!ok) break;
  }
  return c;
}

}  // namespace

bool is_valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      ++i;
      continue;
    }
    const Lead lead = lead_of(b);
    if (lead.need == 0 || continuation_count(s, i, lead) != lead.need) return false;
    i += 1 + lead.need;
  }
  return true;
}

void append_lossy_utf8(std::string& out, std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    // Copy the ASCII run in one go.
    std::size_t j = i;
    while (j < s.size() && static_cast<unsigned char>(s[j]) < 0x80) ++j;
    out.append(s.data() + i, j - i);
    i = j;
    if (i >= s.size()) break;
    const Lead lead = lead_of(static_cast<unsigned char>(s[i]));
    const int c = lead.need == 0 ? 0 : continuation_count(s, i, lead);
    if (lead.need != 0 && c == lead.need) {
      out.append(s.data() + i, 1 + c);
    } else {
      append_utf8(out, kReplacementChar);
    }
    i += 1 + (lead.need != 0 && c == lead.need ? c : c);
  }
}

std::string lossy_utf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  append_lossy_utf8(out, bytes);
  return out;
}

std::size_t incomplete_utf8_tail(std::string_view s) {
  // A sequence needs at most 4 bytes: look at the last 3 for a lead whose valid continuation
  // prefix runs to the end of the text.
  for (std::size_t back = 1; back <= 3 && back <= s.size(); ++back) {
    const std::size_t i = s.size() - back;
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) return 0;
    if (b >= 0xC0) {
      const Lead lead = lead_of(b);
      if (lead.need == 0) return 0;
      const int c = continuation_count(s, i, lead);
      return (c < lead.need && static_cast<std::size_t>(c) == back - 1) ? back : 0;
    }
  }
  return 0;
}

bool is_white_space(std::uint32_t cp) {
  if (cp < 0x80) return cp == ' ' || (cp >= 0x09 && cp <= 0x0D);
  return u_hasBinaryProperty(static_cast<UChar32>(cp), UCHAR_WHITE_SPACE);
}

bool is_numeric(std::uint32_t cp) {
  if (cp < 0x80) return cp >= '0' && cp <= '9';
  return (U_GET_GC_MASK(static_cast<UChar32>(cp)) & U_GC_N_MASK) != 0;
}

bool is_punctuation(std::uint32_t cp) {
  if (cp < 0x80)
    return (cp >= 0x21 && cp <= 0x2F) || (cp >= 0x3A && cp <= 0x40) || (cp >= 0x5B && cp <= 0x60) ||
           (cp >= 0x7B && cp <= 0x7E);
  return (U_GET_GC_MASK(static_cast<UChar32>(cp)) & U_GC_P_MASK) != 0;
}

bool is_rust_word_char(std::uint32_t cp) {
  if (cp < 0x80) return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || cp == '_';
  const auto c = static_cast<UChar32>(cp);
  return u_hasBinaryProperty(c, UCHAR_ALPHABETIC) || u_hasBinaryProperty(c, UCHAR_JOIN_CONTROL) ||
         (U_GET_GC_MASK(c) & (U_GC_M_MASK | U_GC_ND_MASK | U_GC_PC_MASK)) != 0;
}

bool is_combining_mark(std::uint32_t cp) {
  return cp >= 0x300 && (U_GET_GC_MASK(static_cast<UChar32>(cp)) & U_GC_M_MASK) != 0;
}

void append_lowercase(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp));
    return;
  }
  // One code point on its own: ICU's full mapping without context is Rust's to_lowercase (a
  // lone capital sigma has no cased letter before it, so it maps to the non-final form).
  UChar src[2];
  int32_t src_len = 0;
  U16_APPEND_UNSAFE(src, src_len, static_cast<UChar32>(cp));
  UChar dst[8];
  UErrorCode ec = U_ZERO_ERROR;
  const int32_t n = u_strToLower(dst, 8, src, src_len, "", &ec);
  if (U_FAILURE(ec)) {
    append_utf8(out, cp);
    return;
  }
  for (int32_t k = 0; k < n;) {
    UChar32 c;
    U16_NEXT_UNSAFE(dst, k, c);
    append_utf8(out, static_cast<std::uint32_t>(c));
  }
}

namespace {

const icu::Normalizer2* normalizer_for(NormalForm form) {
  UErrorCode ec = U_ZERO_ERROR;
  switch (form) {
    case NormalForm::nfc:
      return icu::Normalizer2::getNFCInstance(ec);
    case NormalForm::nfd:
      return icu::Normalizer2::getNFDInstance(ec);
    case NormalForm::nfkc:
      return icu::Normalizer2::getNFKCInstance(ec);
    case NormalForm::nfkd:
      return icu::Normalizer2::getNFKDInstance(ec);
  }
  return nullptr;
}

void append_normalized(std::string& out, std::string_view segment, const icu::Normalizer2* n) {
  UErrorCode ec = U_ZERO_ERROR;
  const icu::UnicodeString in =
      icu::UnicodeString::fromUTF8(icu::StringPiece(segment.data(), static_cast<int32_t>(segment.size())));
  const icu::UnicodeString result = n->normalize(in, ec);
  if (U_FAILURE(ec)) {
    out.append(segment);
    return;
  }
  result.toUTF8String(out);
}

}  // namespace

std::string normalize_unicode(std::string_view text, NormalForm form, std::vector<std::uint32_t>* segments) {
  const icu::Normalizer2* n = normalizer_for(form);
  std::string out;
  if (n == nullptr) return std::string(text);
  // ASCII never changes under any normal form.
  bool ascii = true;
  for (char c : text) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  if (ascii) {
    if (segments) {
      segments->resize(text.size());
      for (std::size_t i = 0; i < text.size(); ++i) (*segments)[i] = static_cast<std::uint32_t>(i);
    }
    return std::string(text);
  }
  out.reserve(text.size() + text.size() / 4);
  if (segments == nullptr) {
    append_normalized(out, text, n);
    return out;
  }
  // Normalize segment by segment (a segment starts at a character with a boundary before it),
  // so each output byte can be traced to the segment's first input character.
  segments->clear();
  std::size_t start = 0;
  std::size_t i = 0;
  auto emit = [&](std::size_t end) {
    const std::size_t before = out.size();
    append_normalized(out, text.substr(start, end - start), n);
    segments->insert(segments->end(), out.size() - before, static_cast<std::uint32_t>(start));
  };
  while (i < text.size()) {
    const std::size_t at = i;
    const std::uint32_t cp = next_code_point(text, i);
    if (at > start && n->hasBoundaryBefore(static_cast<UChar32>(cp))) {
      emit(at);
      start = at;
    }
  }
  if (start < text.size()) emit(text.size());
  return out;
}

}  // namespace day0::tokenizer
