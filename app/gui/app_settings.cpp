#include "gui/app_settings.h"

#include <QFile>
#include <QVariantMap>
#include <algorithm>

#include "day0/chat.h"
#include "day0/paths.h"
#include "gui/user_path.h"

namespace day0::app {
namespace {
constexpr int kRecentModels = 8;
}

AppSettings::AppSettings(const QString& file, const QString& activeDataFolder, QObject* parent)
    : QObject(parent),
      settings_(std::make_unique<QSettings>(file, QSettings::IniFormat)),
      activeDataFolder_(activeDataFolder) {}

QString AppSettings::storedDataFolder(const QString& file) {
  QSettings settings(file, QSettings::IniFormat);
  const QString stored = settings.value(QStringLiteral("data/folder")).toString();
  return stored.isEmpty() ? QString::fromStdString(user_data_dir().string()) : stored;
}

QString AppSettings::device() const {
  return settings_->value(QStringLiteral("engine/device"), QStringLiteral("cpu")).toString();
}
double AppSettings::expertCacheGiB() const {
  return settings_->value(QStringLiteral("engine/expertCacheGiB"), 16.0).toDouble();
}
double AppSettings::temperature() const {
  return settings_->value(QStringLiteral("sampling/temperature"), 0.7).toDouble();
}
double AppSettings::topP() const { return settings_->value(QStringLiteral("sampling/topP"), 0.95).toDouble(); }
int AppSettings::topK() const { return settings_->value(QStringLiteral("sampling/topK"), 0).toInt(); }
int AppSettings::maxNewTokens() const {
  return settings_->value(QStringLiteral("sampling/maxNewTokens"), 1024).toInt();
}
QString AppSettings::contextOverflow() const {
  const QString v = settings_->value(QStringLiteral("chat/contextOverflow")).toString();
  const auto policy = parse_context_overflow(v.toStdString());
  return QString::fromLatin1(context_overflow_name(policy.value_or(ContextOverflow::truncate_middle)));
}

double AppSettings::minP() const { return settings_->value(QStringLiteral("sampling/minP"), 0.0).toDouble(); }
double AppSettings::repetitionPenalty() const {
  return settings_->value(QStringLiteral("sampling/repetitionPenalty"), 1.0).toDouble();
}
QStringList AppSettings::stopStrings() const {
  return cleanStopStrings(settings_->value(QStringLiteral("sampling/stopStrings")).toStringList());
}
int AppSettings::contextLength() const {
  return std::clamp(settings_->value(QStringLiteral("engine/contextLength"), 0).toInt(), 0, kMaxContextLength);
}
QString AppSettings::systemPrompt() const { return settings_->value(QStringLiteral("chat/systemPrompt")).toString(); }
QString AppSettings::theme() const {
  return settings_->value(QStringLiteral("ui/theme"), QStringLiteral("system")).toString();
}
QString AppSettings::dataFolder() const {
  return settings_->value(QStringLiteral("data/folder"), activeDataFolder_).toString();
}
QStringList AppSettings::recentModels() const {
  return settings_->value(QStringLiteral("models/recent")).toStringList();
}
bool AppSettings::firstRun() const { return !settings_->value(QStringLiteral("app/firstRunDone"), false).toBool(); }
bool AppSettings::serverEnabled() const { return settings_->value(QStringLiteral("server/enabled"), false).toBool(); }
int AppSettings::serverPort() const { return settings_->value(QStringLiteral("server/port"), 8080).toInt(); }
bool AppSettings::serverAllowNetwork() const {
  return settings_->value(QStringLiteral("server/allowNetwork"), false).toBool();
}
QString AppSettings::serverApiKey() const { return settings_->value(QStringLiteral("server/apiKey")).toString(); }
QString AppSettings::serverCorsOrigins() const {
  return settings_->value(QStringLiteral("server/corsOrigins")).toString();
}

QVariantList AppSettings::remoteEndpoints() const {
  QVariantList list;
  const int n = settings_->beginReadArray(QStringLiteral("remote"));
  for (int i = 0; i < n; ++i) {
    settings_->setArrayIndex(i);
    list.append(QVariantMap{{QStringLiteral("url"), settings_->value(QStringLiteral("url")).toString()},
                            {QStringLiteral("apiKey"), settings_->value(QStringLiteral("apiKey")).toString()},
                            {QStringLiteral("model"), settings_->value(QStringLiteral("model")).toString()}});
  }
  settings_->endArray();
  return list;
}

void AppSettings::sync() {
  settings_->sync();
  QFile::setPermissions(settings_->fileName(), QFile::ReadOwner | QFile::WriteOwner);
}

void AppSettings::write(const QString& key, const QVariant& value) {
  if (settings_->value(key) == value) return;
  settings_->setValue(key, value);
  sync();
  emit changed();
}

void AppSettings::writeRemotes(const QVariantList& list) {
  settings_->remove(QStringLiteral("remote"));
  settings_->beginWriteArray(QStringLiteral("remote"), static_cast<int>(list.size()));
  for (int i = 0; i < list.size(); ++i) {
    settings_->setArrayIndex(i);
    const QVariantMap m = list[i].toMap();
    for (const char* key : {"url", "apiKey", "model"})
      settings_->setValue(QLatin1String(key), m.value(QLatin1String(key)));
  }
  settings_->endArray();
  sync();
  emit changed();
}

namespace {
// Drops the endpoint with this url and model from `list`; true when there was one.
bool dropRemote(QVariantList& list, const QString& url, const QString& model) {
  const auto before = list.size();
  list.erase(std::remove_if(list.begin(), list.end(),
                            [&](const QVariant& v) {
                              const QVariantMap m = v.toMap();
                              return m.value(QStringLiteral("url")).toString() == url &&
                                     m.value(QStringLiteral("model")).toString() == model;
                            }),
             list.end());
  return list.size() != before;
}
}  // namespace

void AppSettings::rememberRemote(const QString& url, const QString& apiKey, const QString& model) {
  QVariantList list = remoteEndpoints();
  dropRemote(list, url, model);
  list.prepend(
      QVariantMap{{QStringLiteral("url"), url}, {QStringLiteral("apiKey"), apiKey}, {QStringLiteral("model"), model}});
  while (list.size() > kRecentModels) list.removeLast();
  writeRemotes(list);
}

void AppSettings::forgetRemote(const QString& url, const QString& model) {
  QVariantList list = remoteEndpoints();
  if (dropRemote(list, url, model)) writeRemotes(list);
}

void AppSettings::setDevice(const QString& v) {
  write(QStringLiteral("engine/device"), v.isEmpty() ? QStringLiteral("cpu") : v);
}
void AppSettings::setExpertCacheGiB(double v) {
  write(QStringLiteral("engine/expertCacheGiB"), std::clamp(v, 0.5, 4096.0));
}
void AppSettings::setTemperature(double v) { write(QStringLiteral("sampling/temperature"), std::clamp(v, 0.0, 2.0)); }
void AppSettings::setTopP(double v) { write(QStringLiteral("sampling/topP"), std::clamp(v, 0.0, 1.0)); }
void AppSettings::setTopK(int v) { write(QStringLiteral("sampling/topK"), std::clamp(v, 0, 1000)); }
void AppSettings::setMaxNewTokens(int v) { write(QStringLiteral("sampling/maxNewTokens"), std::clamp(v, 1, 131072)); }
void AppSettings::setContextOverflow(const QString& v) {
  if (const auto policy = parse_context_overflow(v.toStdString()))
    write(QStringLiteral("chat/contextOverflow"), QString::fromLatin1(context_overflow_name(*policy)));
}

void AppSettings::setMinP(double v) { write(QStringLiteral("sampling/minP"), std::clamp(v, 0.0, 1.0)); }
void AppSettings::setRepetitionPenalty(double v) {
  write(QStringLiteral("sampling/repetitionPenalty"), std::clamp(v, 0.5, 2.0));
}
void AppSettings::setStopStrings(const QStringList& v) {
  write(QStringLiteral("sampling/stopStrings"), cleanStopStrings(v));
}
void AppSettings::setContextLength(int v) {
  write(QStringLiteral("engine/contextLength"), std::clamp(v, 0, kMaxContextLength));
}

QStringList AppSettings::cleanStopStrings(const QStringList& v) {
  QStringList out;
  for (const QString& s : v) {
    if (s.isEmpty() || out.contains(s)) continue;
    out << s.left(kMaxStopStringChars);
    if (out.size() == kMaxStopStrings) break;
  }
  return out;
}
void AppSettings::setSystemPrompt(const QString& v) { write(QStringLiteral("chat/systemPrompt"), v); }
void AppSettings::setTheme(const QString& v) {
  if (v == QLatin1String("light") || v == QLatin1String("dark") || v == QLatin1String("system"))
    write(QStringLiteral("ui/theme"), v);
}
void AppSettings::setDataFolder(const QString& v) { write(QStringLiteral("data/folder"), localPathFromUser(v)); }
QString AppSettings::pendingMove() const { return settings_->value(QStringLiteral("data/moveFrom")).toString(); }
void AppSettings::setPendingMove(const QString& from) {
  if (from.isEmpty()) {
    if (!settings_->contains(QStringLiteral("data/moveFrom"))) return;
    settings_->remove(QStringLiteral("data/moveFrom"));
    sync();
    emit changed();
    return;
  }
  write(QStringLiteral("data/moveFrom"), from);
}
void AppSettings::setServerEnabled(bool v) { write(QStringLiteral("server/enabled"), v); }
void AppSettings::setServerPort(int v) { write(QStringLiteral("server/port"), std::clamp(v, 0, 65535)); }
void AppSettings::setServerAllowNetwork(bool v) { write(QStringLiteral("server/allowNetwork"), v); }
void AppSettings::setServerApiKey(const QString& v) { write(QStringLiteral("server/apiKey"), v.trimmed()); }
void AppSettings::setServerCorsOrigins(const QString& v) {
  write(QStringLiteral("server/corsOrigins"), v.simplified().left(4000));
}

void AppSettings::addRecentModel(const QString& dir) {
  QStringList recent = recentModels();
  recent.removeAll(dir);
  recent.prepend(dir);
  while (recent.size() > kRecentModels) recent.removeLast();
  write(QStringLiteral("models/recent"), recent);
}

void AppSettings::forgetRecentModel(const QString& dir) {
  QStringList recent = recentModels();
  recent.removeAll(dir);
  write(QStringLiteral("models/recent"), recent);
}

void AppSettings::setFirstRunDone() { write(QStringLiteral("app/firstRunDone"), true); }

void AppSettings::resetSampling() {
  for (const char* key : {"sampling/temperature", "sampling/topP", "sampling/topK", "sampling/maxNewTokens", "sampling/minP",
                          "sampling/repetitionPenalty", "sampling/stopStrings"})
    settings_->remove(QLatin1String(key));
  sync();
  emit changed();
}

}  // namespace day0::app
