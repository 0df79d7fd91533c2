#pragma once
// Encodings the history needs: SHA-256 (content addresses of attachments), base64 (attachment
// bytes in JSON exports), UUID v4 (identities that survive export/import), UTF-8 checks.
#include <optional>
#include <string>
#include <string_view>

namespace day0::storage {

// 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);
bool is_sha256_hex(std::string_view text);

// Standard alphabet with '=' padding (RFC 4648 section 4).
std::string base64_encode(std::string_view bytes);
// Strict: only the standard alphabet, length a multiple of 4, padding only at the end, and
// zero unused bits, so every byte string has exactly one accepted encoding. nullopt otherwise.
std::optional<std::string> base64_decode(std::string_view text);

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
