#pragma once
// Limits and checks shared by the history's writers (HistoryDb, import). The limits keep a
// hostile or broken file from filling the disk or memory; real conversations are far below.
#include <cstdint>
#include <string_view>

namespace day0::storage {

inline constexpr std::size_t kMaxTextBytes = 64u << 20;        // one message's content or reasoning
inline constexpr std::size_t kMaxShortTextBytes = 64u << 10;   // titles, models, file names, errors
inline constexpr std::size_t kMaxAttachmentBytes = 64u << 20;  // one attachment
inline constexpr std::size_t kMaxSettingsBytes = 1u << 20;     // a conversation's settings JSON
inline constexpr int kMaxSettingsDepth = 32;
inline constexpr std::int64_t kMaxTimestampMs = 253402300799999;  // 9999-12-31T23:59:59.999Z

// type/subtype in the characters RFC 6838 allows, lowercase, at most 255 bytes.
bool is_valid_mime_type(std::string_view text);

}  // namespace day0::storage
