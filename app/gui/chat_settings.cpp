// ChatController: the open conversation's own settings (system prompt, sampling, context
// choice, knowledge folders) over the Settings' defaults, and the presets that save them.
#include <QLocale>
#include <algorithm>
#include <cmath>
#include <variant>

#include "bridge/engine_bridge.h"
#include "gui/app_settings.h"
#include "gui/chat_controller.h"
#include "gui/chat_internal.h"
#include "gui/message_list_model.h"

namespace day0::app {
namespace {

using namespace chat_internal;

// The chat's generation settings: their name in QML, in the stored JSON, and their range.
struct GenerationField {
  const char* qml;
  const char* json;
  enum Kind { text, real, integer, strings } kind;
  double min = 0, max = 0;
};
constexpr GenerationField kGenerationFields[] = {
    {"systemPrompt", "system_prompt", GenerationField::text},
    {"temperature", "temperature", GenerationField::real, 0.0, 2.0},
    {"topP", "top_p", GenerationField::real, 0.0, 1.0},
    {"topK", "top_k", GenerationField::integer, 0, 1000},
    {"minP", "min_p", GenerationField::real, 0.0, 1.0},
    {"repetitionPenalty", "repetition_penalty", GenerationField::real, 0.5, 2.0},
    {"maxNewTokens", "max_new_tokens", GenerationField::integer, 1, 131072},
    {"stopStrings", "stop", GenerationField::strings},
};
constexpr int kMaxSystemPromptChars = 100000;

const GenerationField* fieldByQml(const QString& name) {
  for (const auto& f : kGenerationFields)
    if (name == QLatin1String(f.qml)) return &f;
  return nullptr;
}

// `value` as the field stores it, or why it cannot be.
struct Refusal {
  QString why;
};

std::variant<nlohmann::json, Refusal> checkField(const GenerationField& f, const nlohmann::json& value) {
  switch (f.kind) {
    case GenerationField::text:
      if (!value.is_string()) return Refusal{QObject::tr("%1 must be text.").arg(QLatin1String(f.qml))};
      if (QString::fromStdString(value.get<std::string>()).size() > kMaxSystemPromptChars)
        return Refusal{QObject::tr("The system prompt is longer than %1 characters.").arg(kMaxSystemPromptChars)};
      return value;
    case GenerationField::real:
    case GenerationField::integer: {
      if (!value.is_number()) return Refusal{QObject::tr("%1 must be a number.").arg(QLatin1String(f.qml))};
      const double v = value.get<double>();
      if (!std::isfinite(v) || v < f.min || v > f.max || (f.kind == GenerationField::integer && v != std::floor(v)))
        return Refusal{QObject::tr("%1 must be %2 between %3 and %4, not %5.")
            .arg(QLatin1String(f.qml), f.kind == GenerationField::integer ? QObject::tr("a whole number")
                                                                          : QObject::tr("a number"))
            .arg(f.min)
            .arg(f.max)
            .arg(v)};
      return f.kind == GenerationField::integer ? nlohmann::json(static_cast<std::int64_t>(v)) : nlohmann::json(v);
    }
    case GenerationField::strings: {
      if (!value.is_array()) return Refusal{QObject::tr("The stop strings must be a list of texts.")};
      QStringList list;
      for (const auto& item : value) {
        if (!item.is_string()) return Refusal{QObject::tr("The stop strings must be a list of texts.")};
        const QString text = QString::fromStdString(item.get<std::string>());
        if (text.size() > AppSettings::kMaxStopStringChars)
          return Refusal{QObject::tr("A stop string may have up to %1 characters.").arg(AppSettings::kMaxStopStringChars)};
        list << text;
      }
      list = AppSettings::cleanStopStrings(list);
      if (value.size() > static_cast<std::size_t>(AppSettings::kMaxStopStrings) &&
          list.size() == AppSettings::kMaxStopStrings)
        return Refusal{QObject::tr("At most %1 stop strings.").arg(AppSettings::kMaxStopStrings)};
      nlohmann::json out = nlohmann::json::array();
      for (const QString& t : list) out.push_back(t.toStdString());
      return out;
    }
  }
  return Refusal{QObject::tr("unknown setting")};
}

nlohmann::json toJson(const QVariant& v) {
  switch (v.typeId()) {
    case QMetaType::Bool:
      return v.toBool();
    case QMetaType::Int:
    case QMetaType::LongLong:
    case QMetaType::UInt:
    case QMetaType::ULongLong:
      return v.toLongLong();
    case QMetaType::Double:
    case QMetaType::Float:
      return v.toDouble();
    case QMetaType::QString:
      return v.toString().toStdString();
    case QMetaType::QStringList:
    case QMetaType::QVariantList: {
      nlohmann::json a = nlohmann::json::array();
      for (const QVariant& item : v.toList()) a.push_back(toJson(item));
      return a;
    }
    default:
      break;
  }
  if (v.canConvert<QVariantList>() && !v.canConvert<QString>()) return toJson(QVariant(v.toList()));
  if (v.canConvert<QString>()) return v.toString().toStdString();
  return nullptr;
}

QVariant toVariant(const nlohmann::json& j) {
  if (j.is_string()) return QString::fromStdString(j.get<std::string>());
  if (j.is_number_integer()) return QVariant::fromValue<qint64>(j.get<std::int64_t>());
  if (j.is_number()) return j.get<double>();
  if (j.is_array()) {
    QStringList list;
    for (const auto& item : j)
      if (item.is_string()) list << QString::fromStdString(item.get<std::string>());
    return list;
  }
  return {};
}
}  // namespace

nlohmann::json ChatController::withKnowledgeSettings(nlohmann::json settings) const {
  if (!settings.is_object()) settings = nlohmann::json::object();
  nlohmann::json ids = nlohmann::json::array();
  for (const qint64 id : enabledFolders_) ids.push_back(id);
  settings[kFoldersKey] = ids;
  settings[kWholeKey] = wholeFolders_;
  return settings;
}

QString ChatController::contextOverflow() const {
  const auto it = currentSettings_.find(kOverflowKey);
  if (it == currentSettings_.end() || !it->is_string()) return {};
  const auto policy = parse_context_overflow(it->get<std::string>());
  return policy ? QString::fromLatin1(context_overflow_name(*policy)) : QString();
}

void ChatController::setContextOverflow(const QString& value) {
  const auto policy = parse_context_overflow(value.toStdString());
  if (!value.isEmpty() && !policy) return;
  if (contextOverflow() == value) return;
  if (policy)
    currentSettings_[kOverflowKey] = context_overflow_name(*policy);
  else
    currentSettings_.erase(std::string(kOverflowKey));
  emit contextOverflowChanged();
  if (currentId_ == 0) return;  // a new conversation takes it when it is created
  storage::ConversationPatch patch;
  patch.settings = currentSettings_;
  store_->update_conversation(currentId_, patch, onGui<storage::Ok>([this](const auto& r) {
                                if (!r.is_ok()) failed(tr("The chat's context choice cannot be saved"), r.error());
                              }));
}

void ChatController::applyConversationSettings(const nlohmann::json& settings) {
  const QString overflowBefore = contextOverflow();
  currentSettings_ = settings.is_object() ? settings : nlohmann::json::object();
  if (contextOverflow() != overflowBefore) emit contextOverflowChanged();
  emit chatSettingsChanged();
  QList<qint64> folders;
  if (const auto it = currentSettings_.find(kFoldersKey); it != currentSettings_.end() && it->is_array())
    for (const auto& v : *it)
      if (v.is_number_integer() && v.get<std::int64_t>() > 0 && !folders.contains(v.get<std::int64_t>()))
        folders.append(v.get<std::int64_t>());
  const auto whole = currentSettings_.find(kWholeKey);
  const bool wholeFolders = whole != currentSettings_.end() && whole->is_boolean() && whole->get<bool>();
  if (folders == enabledFolders_ && wholeFolders == wholeFolders_) return;
  enabledFolders_ = folders;
  wholeFolders_ = wholeFolders;
  emit knowledgeChanged();
}

void ChatController::saveKnowledgeSettings() {
  currentSettings_ = withKnowledgeSettings(currentSettings_);
  saveConversationSettings(tr("The knowledge choice cannot be saved"));
}

void ChatController::saveConversationSettings(const QString& what) {
  if (currentId_ == 0) return;  // a new conversation takes them when it is created
  storage::ConversationPatch patch;
  patch.settings = currentSettings_;
  store_->update_conversation(currentId_, patch, onGui<storage::Ok>([this, what](const auto& r) {
                                if (!r.is_ok()) failed(what, r.error());
                              }));
}

nlohmann::json ChatController::defaultGeneration() const {
  nlohmann::json g = nlohmann::json::object();
  g["system_prompt"] = settings_->systemPrompt().trimmed().toStdString();
  g["temperature"] = settings_->temperature();
  g["top_p"] = settings_->topP();
  g["top_k"] = settings_->topK();
  g["min_p"] = settings_->minP();
  g["repetition_penalty"] = settings_->repetitionPenalty();
  g["max_new_tokens"] = settings_->maxNewTokens();
  nlohmann::json stop = nlohmann::json::array();
  for (const QString& t : settings_->stopStrings()) stop.push_back(t.toStdString());
  g["stop"] = stop;
  return g;
}

nlohmann::json ChatController::effectiveGeneration() const {
  nlohmann::json g = defaultGeneration();
  const auto own = currentSettings_.find(kGenerationKey);
  if (own == currentSettings_.end() || !own->is_object()) return g;
  // Values stored by another version or edited by hand are used only when valid.
  for (const auto& f : kGenerationFields) {
    const auto it = own->find(f.json);
    if (it == own->end()) continue;
    auto checked = checkField(f, *it);
    if (auto* value = std::get_if<nlohmann::json>(&checked)) g[f.json] = *value;
  }
  return g;
}

QVariantMap ChatController::chatSettings() const {
  const nlohmann::json g = effectiveGeneration();
  QVariantMap map;
  for (const auto& f : kGenerationFields) map.insert(QLatin1String(f.qml), toVariant(g[f.json]));
  map.insert(QStringLiteral("custom"), currentSettings_.contains(kGenerationKey));
  return map;
}

GenerationParams ChatController::generationParams() const {
  const nlohmann::json g = effectiveGeneration();
  GenerationParams p;
  p.temperature = g["temperature"].get<float>();
  p.top_p = g["top_p"].get<float>();
  p.top_k = g["top_k"].get<int>();
  p.min_p = g["min_p"].get<float>();
  p.repetition_penalty = g["repetition_penalty"].get<float>();
  p.max_new_tokens = g["max_new_tokens"].get<std::int64_t>();
  for (const auto& t : g["stop"]) p.stop_strings.push_back(t.get<std::string>());
  return p;
}

void ChatController::setGeneration(nlohmann::json generation) {
  currentSettings_[kGenerationKey] = std::move(generation);
  emit chatSettingsChanged();
  saveConversationSettings(tr("The chat settings cannot be saved"));
  syncSystemMessage();
}

void ChatController::syncSystemMessage() {
  if (currentId_ == 0) return;  // a new conversation starts with it
  const QString wanted = qs(effectiveGeneration().value("system_prompt", std::string())).trimmed();
  QString stored;
  if (const auto last = messages_->lastId()) {
    const auto chain = messages_->chainTo(*last);
    if (!chain.empty() && chain.front().role == storage::Role::system) stored = qs(chain.front().content);
  }
  if (stored == wanted) return;
  // The conversation's system message says what its requests send, at once: its export, the
  // history in day0-cli and a later reply all see the new one.
  const qint64 id = currentId_;
  const qint64 focus = messages_->lastId().value_or(0);
  store_->set_system_prompt(id, wanted.toStdString(), onGui<storage::Ok>([this, id, focus](const auto& r) {
                              if (!r.is_ok()) return failed(tr("The system prompt cannot be saved"), r.error());
                              if (currentId_ != id) return;
                              reloadMessages(id, focus, [this, id]() { emit systemMessageChanged(id); });
                            }));
}

bool ChatController::setChatSetting(const QString& key, const QVariant& value) {
  const GenerationField* field = fieldByQml(key);
  if (field == nullptr) {
    emit errorOccurred(tr("There is no chat setting named %1.").arg(key));
    return false;
  }
  nlohmann::json input = toJson(value);
  if (field->kind == GenerationField::strings && input.is_string()) {
    // One stop string a line, as the text field shows them.
    nlohmann::json lines = nlohmann::json::array();
    for (const QString& line : value.toString().split(u'\n', Qt::SkipEmptyParts)) lines.push_back(line.toStdString());
    input = lines;
  }
  if ((field->kind == GenerationField::real || field->kind == GenerationField::integer) && input.is_string()) {
    bool ok = false;
    const double number = QLocale::c().toDouble(value.toString().trimmed(), &ok);
    if (ok) input = number;
  }
  auto checked = checkField(*field, input);
  if (const auto* refusal = std::get_if<Refusal>(&checked)) {
    emit errorOccurred(refusal->why);
    return false;
  }
  nlohmann::json generation = effectiveGeneration();
  if (currentSettings_.contains(kGenerationKey) && generation[field->json] == std::get<nlohmann::json>(checked))
    return true;
  generation[field->json] = std::get<nlohmann::json>(checked);
  setGeneration(std::move(generation));
  return true;
}

void ChatController::resetChatSettings() { setGeneration(defaultGeneration()); }

void ChatController::refreshPresets() {
  store_->run<std::vector<storage::Preset>>(
      [](storage::HistoryDb& db) { return db.presets(); },
      onGui<std::vector<storage::Preset>>([this](const auto& r) {
        if (!r.is_ok()) return failed(tr("The presets cannot be read"), r.error());
        QStringList names;
        for (const auto& p : r.value()) names << qs(p.name);
        if (names == presets_) return;
        presets_ = names;
        emit presetsChanged();
      }));
}

void ChatController::savePreset(const QString& rawName) {
  const QString name = rawName.simplified();
  if (name.isEmpty()) {
    emit errorOccurred(tr("Give the preset a name."));
    return;
  }
  if (name.size() > 100) {
    emit errorOccurred(tr("A preset's name may have up to 100 characters."));
    return;
  }
  const std::string n = name.toStdString();
  const nlohmann::json generation = effectiveGeneration();
  store_->run<storage::Ok>([n, generation](storage::HistoryDb& db) -> storage::StoreStatus {
    return db.save_preset(n, generation);
  }, onGui<storage::Ok>([this, name](const auto& r) {
    if (!r.is_ok()) return failed(tr("The preset cannot be saved"), r.error());
    emit noticeOccurred(tr("Saved the preset “%1”.").arg(name));
    refreshPresets();
  }));
}

void ChatController::applyPreset(const QString& name) {
  const std::string n = name.toStdString();
  store_->run<std::vector<storage::Preset>>(
      [](storage::HistoryDb& db) { return db.presets(); },
      onGui<std::vector<storage::Preset>>([this, n, name](const auto& r) {
        if (!r.is_ok()) return failed(tr("The presets cannot be read"), r.error());
        const auto it = std::find_if(r.value().begin(), r.value().end(), [&](const auto& p) { return p.name == n; });
        if (it == r.value().end()) {
          emit errorOccurred(tr("There is no preset named “%1”.").arg(name));
          return refreshPresets();
        }
        // Valid values of the preset over the defaults: a preset from another version still applies.
        nlohmann::json generation = defaultGeneration();
        for (const auto& f : kGenerationFields)
          if (const auto v = it->settings.find(f.json); v != it->settings.end())
            if (auto checked = checkField(f, *v); std::holds_alternative<nlohmann::json>(checked))
              generation[f.json] = std::get<nlohmann::json>(checked);
        setGeneration(std::move(generation));
        emit presetApplied(name);
      }));
}

void ChatController::deletePreset(const QString& name) {
  const std::string n = name.toStdString();
  store_->run<storage::Ok>([n](storage::HistoryDb& db) -> storage::StoreStatus { return db.delete_preset(n); },
                           onGui<storage::Ok>([this](const auto& r) {
                             if (!r.is_ok()) failed(tr("The preset cannot be deleted"), r.error());
                             refreshPresets();
                           }));
}

}  // namespace day0::app
