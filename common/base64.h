#pragma once
// Base64, standard alphabet with '=' padding (RFC 4648 section 4): attachment bytes in the
// history's JSON exports, images as data URLs to and from OpenAI-compatible servers.
#include <optional>
#include <string>
#include <string_view>

namespace day0 {

std::string base64_encode(std::string_view bytes);

// Only the standard alphabet, a length that is a multiple of 4 and padding only at the end;
// nullopt otherwise. `canonical` also requires the bits the padding discards to be zero, so that
// every byte string has exactly one accepted encoding.
std::optional<std::string> base64_decode(std::string_view text, bool canonical = true);

}  // namespace day0
