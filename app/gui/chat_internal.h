#pragma once
// What the parts of ChatController (chat_controller.cpp: the conversations; chat_reply.cpp:
// sending and streaming; chat_settings.cpp: the per-chat settings and presets;
// chat_attachments.cpp: the composer's images and documents) share. Included by those only.
#include <QMetaObject>
#include <QString>
#include <string>

#include "gui/chat_controller.h"

namespace day0::app {
namespace chat_internal {

// Keys of a conversation's settings (storage::Conversation::settings).
inline constexpr const char* kFoldersKey = "knowledge_folders";
inline constexpr const char* kWholeKey = "knowledge_whole_folders";
inline constexpr const char* kOverflowKey = "context_overflow";
inline constexpr const char* kGenerationKey = "generation";

inline QString qs(const std::string& s) { return QString::fromStdString(s); }

}  // namespace chat_internal

template <typename T>
storage::HistoryStore::Done<T> ChatController::onGui(std::function<void(const storage::StoreResult<T>&)> f) {
  // Runs on the store thread: hand the result to the GUI thread. The store is destroyed (and
  // its thread joined) at the start of ~ChatController, so `this` outlives every callback.
  return [this, f = std::move(f)](const storage::StoreResult<T>& result) {
    QMetaObject::invokeMethod(
        this, [f, result]() { f(result); }, Qt::QueuedConnection);
  };
}

}  // namespace day0::app
