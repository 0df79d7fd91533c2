#pragma once
// The person's settings, persisted with QSettings (an INI file): device, expert-cache budget,
// sampling defaults, system prompt, theme, data folder, recent models, remote endpoints and the
// local server. QML binds to these properties; every setter writes through at once. The file may
// hold API keys, so it is kept readable by its owner only.
#include <QObject>
#include <QSettings>
#include <QString>
#include <QStringList>
#include <QVariantList>
#include <memory>

namespace day0::app {

class AppSettings : public QObject {
  Q_OBJECT
  Q_PROPERTY(QString device READ device WRITE setDevice NOTIFY changed)
  Q_PROPERTY(double expertCacheGiB READ expertCacheGiB WRITE setExpertCacheGiB NOTIFY changed)
  Q_PROPERTY(double temperature READ temperature WRITE setTemperature NOTIFY changed)
  Q_PROPERTY(double topP READ topP WRITE setTopP NOTIFY changed)
  Q_PROPERTY(int topK READ topK WRITE setTopK NOTIFY changed)
  Q_PROPERTY(int maxNewTokens READ maxNewTokens WRITE setMaxNewTokens NOTIFY changed)
  Q_PROPERTY(double minP READ minP WRITE setMinP NOTIFY changed)
  Q_PROPERTY(double repetitionPenalty READ repetitionPenalty WRITE setRepetitionPenalty NOTIFY changed)
  Q_PROPERTY(QStringList stopStrings READ stopStrings WRITE setStopStrings NOTIFY changed)
  // Positions a loaded model may hold (0: the model's own, bounded by memory); used at load.
  Q_PROPERTY(int contextLength READ contextLength WRITE setContextLength NOTIFY changed)
  Q_PROPERTY(QString systemPrompt READ systemPrompt WRITE setSystemPrompt NOTIFY changed)
  // A conversation longer than the model's context, unless the chat chooses otherwise:
  // "truncate-middle" (the default), "rolling-window" or "stop".
  Q_PROPERTY(QString contextOverflow READ contextOverflow WRITE setContextOverflow NOTIFY changed)
  Q_PROPERTY(QString theme READ theme WRITE setTheme NOTIFY changed)
  Q_PROPERTY(QString dataFolder READ dataFolder WRITE setDataFolder NOTIFY changed)
  Q_PROPERTY(QString activeDataFolder READ activeDataFolder CONSTANT)
  Q_PROPERTY(QStringList recentModels READ recentModels NOTIFY changed)
  Q_PROPERTY(bool firstRun READ firstRun NOTIFY changed)
  Q_PROPERTY(bool serverEnabled READ serverEnabled WRITE setServerEnabled NOTIFY changed)
  Q_PROPERTY(int serverPort READ serverPort WRITE setServerPort NOTIFY changed)
  Q_PROPERTY(bool serverAllowNetwork READ serverAllowNetwork WRITE setServerAllowNetwork NOTIFY changed)
  Q_PROPERTY(QString serverApiKey READ serverApiKey WRITE setServerApiKey NOTIFY changed)
  // Browser pages on these origins may call the server (comma-separated; "*": any); empty: none.
  Q_PROPERTY(QString serverCorsOrigins READ serverCorsOrigins WRITE setServerCorsOrigins NOTIFY changed)

 public:
  // `file`: the INI file; `activeDataFolder`: where this run keeps its history (the stored
  // data folder takes effect at the next start).
  AppSettings(const QString& file, const QString& activeDataFolder, QObject* parent = nullptr);

  QString device() const;
  double expertCacheGiB() const;
  double temperature() const;
  double topP() const;
  int topK() const;
  int maxNewTokens() const;
  QString contextOverflow() const;
  double minP() const;
  double repetitionPenalty() const;
  QStringList stopStrings() const;
  int contextLength() const;
  QString systemPrompt() const;
  QString theme() const;
  QString dataFolder() const;
  QString activeDataFolder() const { return activeDataFolder_; }
  QStringList recentModels() const;
  bool firstRun() const;
  // The OpenAI-compatible server of the app (off by default, loopback unless allowed).
  bool serverEnabled() const;
  int serverPort() const;  // 0: any free port
  bool serverAllowNetwork() const;
  QString serverApiKey() const;
  QString serverCorsOrigins() const;
  // Remote endpoints used before: maps with url, apiKey, model (the model as it was resolved).
  QVariantList remoteEndpoints() const;

  void setDevice(const QString& v);
  void setExpertCacheGiB(double v);
  void setTemperature(double v);
  void setTopP(double v);
  void setTopK(int v);
  void setMaxNewTokens(int v);
  void setContextOverflow(const QString& v);  // ignores names parse_context_overflow refuses
  void setMinP(double v);
  void setRepetitionPenalty(double v);
  // Empty lines are dropped; at most kMaxStopStrings of at most kMaxStopStringChars each.
  void setStopStrings(const QStringList& v);
  void setContextLength(int v);
  void setSystemPrompt(const QString& v);
  void setTheme(const QString& v);
  void setDataFolder(const QString& v);
  // The folder whose history moves to dataFolder at the next start (empty: none).
  QString pendingMove() const;
  void setPendingMove(const QString& from);
  void setServerEnabled(bool v);
  void setServerPort(int v);
  void setServerAllowNetwork(bool v);
  void setServerApiKey(const QString& v);
  void setServerCorsOrigins(const QString& v);
  // Remembers an endpoint (replacing one with the same url and model).
  void rememberRemote(const QString& url, const QString& apiKey, const QString& model);
  void forgetRemote(const QString& url, const QString& model);

  // Moves `dir` to the front of the recent models (at most 8).
  void addRecentModel(const QString& dir);
  Q_INVOKABLE void forgetRecentModel(const QString& dir);
  void setFirstRunDone();
  Q_INVOKABLE void resetSampling();

  static constexpr int kMaxStopStrings = 8;
  static constexpr int kMaxStopStringChars = 200;
  static constexpr int kMaxContextLength = 1 << 20;
  // `v` without empty entries and duplicates, cut to the limits above.
  static QStringList cleanStopStrings(const QStringList& v);

  // The data folder stored in `file`, or the XDG default (for choosing it before start-up).
  static QString storedDataFolder(const QString& file);

 signals:
  void changed();

 private:
  void write(const QString& key, const QVariant& value);
  void writeRemotes(const QVariantList& list);
  void sync();
  std::unique_ptr<QSettings> settings_;
  QString activeDataFolder_;
};

}  // namespace day0::app
