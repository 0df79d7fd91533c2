#pragma once
// Encodings the history needs: SHA-256 (content addresses of attachments), base64 (attachment
// bytes in JSON exports), UUID v4 (identities that survive export/import), UTF-8 checks.
#include <optional>
#include <string>
#include <string_view>

#include "common/base64.h"

namespace day0::storage {

// 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);
bool is_sha256_hex(std::string_view text);

// Base64 (common/base64.h; the history decodes canonically: one accepted encoding per byte string).
using day0::base64_decode;
using day0::base64_encode;

// A random (version 4) UUID from the system's cryptographic generator, lowercase:
// xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx.
std::string new_uuid();
// The lowercase 8-4-4-4-12 form (any version).
bool is_uuid(std::string_view text);

// Well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool is_valid_utf8(std::string_view text);
// `text` with every ill-formed sequence replaced by U+FFFD.
std::string to_valid_utf8(std::string_view text);
// The length of `text` without a trailing multi-byte sequence that is still incomplete (a
// stream cut between two bytes of one character); text.size() when it ends cleanly.
std::size_t utf8_complete_prefix(std::string_view text);

}  // namespace day0::storage
