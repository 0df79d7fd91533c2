#pragma once
// The app's one door to the engine. It owns the day0::Engine (and so its worker thread), loads
// models on a pool thread, and turns engine events, which arrive on the engine thread, into
// signals on the GUI thread. Streamed text is coalesced: the engine thread only appends to a
// buffer, and a 25 ms timer on the GUI thread drains it, so a fast model does not flood the
// event loop and the chat view re-renders at most ~40 times a second. Nothing here blocks the
// GUI thread: loading, prompt formatting and generation all run elsewhere.
//
// The model is either a local folder run by the in-process engine, or a remote
// OpenAI-compatible endpoint (vLLM, SGLang, a llama.cpp server, another Day0): both stream into
// the same signals, so the chat and the history do not tell them apart.
#include <QByteArray>
#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QTemporaryDir>
#include <QTimer>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "day0/chat.h"
#include "day0/engine.h"
#include "knowledge/context.h"
#include "remote/remote_client.h"

namespace day0::app {

struct GenerationParams {
  float temperature = 0.7f;
  float top_p = 0.95f;
  int top_k = 0;
  float min_p = 0.0f;               // 0: off
  float repetition_penalty = 1.0f;  // 1: off
  std::int64_t max_new_tokens = 1024;
  std::vector<std::string> stop_strings;  // the reply ends before the first of these
  std::uint64_t seed = 0;
  // A conversation longer than a local model's context: earlier turns left out of the prompt
  // (contextTrimmed says how many messages), or under stop the request fails.
  ContextOverflow overflow = ContextOverflow::truncate_middle;
};

// An image of a message; its bytes are read when the request is sent, off the GUI thread.
struct ImageRef {
  QString mime_type;  // image/png, image/jpeg, ...
  std::function<QByteArray()> bytes;
};

// One message of the conversation sent to the model, with its images (remote engines receive
// them as data URLs).
struct ContextMessage {
  ChatMessage message;
  std::vector<ImageRef> images;
};

// A remote endpoint as the settings keep it.
struct RemoteEndpoint {
  QString url;     // http(s)://host:port or a base ending in /v1
  QString apiKey;  // empty: none
  QString model;   // empty: the first model the server lists
};

// How a request ended, as the chat view and the history need it.
struct GenerationOutcome {
  quint64 request = 0;
  bool ok = true;          // false: the engine reported an error (message says what)
  bool cancelled = false;  // Stop was pressed
  QString reason;          // eos, stop_string, max_tokens, cancelled, error
  QString message;         // the engine's error message
  GenerationStats stats;
};

class EngineBridge : public QObject {
  Q_OBJECT
 public:
  // `threads`: CPU compute threads (0: one per hardware thread).
  explicit EngineBridge(int threads = 0, QObject* parent = nullptr);
  ~EngineBridge() override;

  // Loads a model folder on a pool thread. `device` is what the settings chose ("cpu",
  // "cuda:0", ...); when the engine cannot use it, the model is loaded on the CPU and
  // modelLoaded's notice says why. After the engine has mapped and validated the checkpoint,
  // its shards are read once into the page cache (when they fit in free memory), which is what
  // the progress reports: the first reply then does not wait on the disk.
  // `contextLength`: positions a session may hold (0: the model's own, bounded by memory).
  void loadModel(const QString& dir, const QString& device, qint64 contextLength = 0);
  // Connects to a remote OpenAI-compatible endpoint on a pool thread: its model list is read
  // (which checks the URL, the key and the model name); then it is the model, and modelLoaded
  // reports `remoteId(url, model)` as the folder and "remote" as the device.
  void connectRemote(const RemoteEndpoint& endpoint);
  void cancelLoad();
  void unloadModel();
  bool loading() const { return loading_; }
  bool hasModel() const { return model_ != nullptr || remote_.has_value(); }
  bool isRemote() const { return remote_.has_value(); }
  // Whether messages may carry images: a remote endpoint (its server decides), or a local model
  // with a vision tower.
  bool acceptsImages() const { return remote_.has_value() || !imagePlaceholder_.empty(); }
  // The endpoint in use (empty when the model is local).
  RemoteEndpoint remoteEndpoint() const;
  // How history and the recent list name a remote model: "<model> @ <url>".
  static QString remoteId(const QString& url, const QString& model);
  // The local model and the engine that runs it, for the OpenAI server (nullptr when none).
  Engine* engine() const { return engine_.get(); }
  std::shared_ptr<Model> localModel() const { return model_; }
  QString modelDir() const { return modelDir_; }
  QString device() const { return device_; }
  const ModelSummary& summary() const { return summary_; }

  // Formats `messages` with the model's chat template and starts generating on the engine
  // thread. Returns the request id, or 0 when no model is loaded or a request is running
  // (generationFailedToStart says why).
  quint64 generate(std::vector<ContextMessage> messages, const GenerationParams& params);
  // Cancels the running request; the engine stops within one step and finishes it as cancelled.
  void stop();
  bool generating() const { return current_ != 0; }

  // Counts tokens as the loaded model does, with its own tokenizer (safe on any thread; it
  // keeps the tokenizer alive). A remote model's tokenizer is not known here: its counts are
  // estimated at 3 bytes a token, which overestimates for most text.
  knowledge::TokenCounter tokenCounter() const;
  // The context window of the loaded model (a remote one: kRemoteContextWindow).
  qint64 contextWindow() const;
  static constexpr qint64 kRemoteContextWindow = 32768;
  // When on, promptSubmitted carries the exact text each local request sends to the engine
  // (its tokens decoded), for tests and diagnostics.
  void setPromptTap(bool on) { promptTap_ = on; }

  // Live figures of the running (or last) request.
  double tokensPerSecond() const { return tokensPerSecond_; }
  double timeToFirstTokenMs() const { return ttftMs_; }
  qint64 contextUsed() const { return contextUsed_; }
  qint64 contextTotal() const { return summary_.max_context; }
  // A model whose experts are streamed: how many of the last reply's were already in memory and
  // how fast the rest came from disk ("experts 23% in memory, 1.19 GB/s from disk"); empty
  // otherwise.
  QString expertText() const { return expertText_; }

 signals:
  void loadProgress(qint64 bytesDone, qint64 bytesTotal, const QString& phase);
  // A new model starts loading (or connecting) and the current one is about to go.
  void loadStarted();
  void modelLoaded(const QString& dir, const QString& device, const QString& notice);
  void loadFailed(const QString& dir, const QString& message);
  void modelUnloaded();
  // Text settled since the previous signal, split into the answer and the model's reasoning.
  void textArrived(quint64 request, const QString& content, const QString& reasoning);
  void generationFinished(const day0::app::GenerationOutcome& outcome);
  void promptSubmitted(quint64 request, const QString& prompt, qint64 tokens);
  // The prompt of a local request is being read: `done` of `total` tokens (coalesced like
  // text; first 0 of total, last total of total before the reply's text).
  void prefillProgress(quint64 request, qint64 done, qint64 total);
  // Messages of the conversation left out of the request's prompt to fit the context.
  void contextTrimmed(quint64 request, int droppedMessages);
  void statsChanged();

 private:
  struct Pending {
    std::string content;
    std::string reasoning;
    std::int64_t tokens = 0;
    std::optional<std::pair<std::int64_t, std::int64_t>> prefill;  // done, total (not yet signalled)
    std::optional<Event> last;  // done or error
  };
  struct Loaded;
  void drain();
  void finishRequest();
  // Supersedes a load in progress and stops a running request; returns the new load's
  // generation and cancel flag.
  std::pair<quint64, std::shared_ptr<std::atomic<bool>>> beginLoad(const QString& phase);
  void generateRemote(quint64 id, std::vector<ContextMessage> messages, const GenerationParams& params);
  void dropModel();
  void onLoaded(std::shared_ptr<Loaded> loaded);

  std::unique_ptr<Engine> engine_;
  std::shared_ptr<Model> model_;
  std::shared_ptr<Session> session_;
  std::shared_ptr<const ChatFormatter> formatter_;
  std::optional<remote::RemoteClient> remote_;
  std::string imagePlaceholder_;             // the local model's text for one image ("" without vision)
  std::shared_ptr<QTemporaryDir> imageDir_;  // images of local requests, as files for the engine
  RemoteEndpoint remoteEndpoint_;
  ModelSummary summary_;
  QString modelDir_;
  QString device_;
  bool loading_ = false;
  std::shared_ptr<std::atomic<bool>> loadCancel_;
  quint64 loadGeneration_ = 0;

  quint64 nextRequest_ = 1;
  quint64 current_ = 0;
  std::shared_ptr<RequestHandle> handle_;
  std::shared_ptr<remote::CancelToken> remoteCancel_;
  std::atomic<bool> stopRequested_{false};
  std::atomic<bool> promptTap_{false};
  QTimer coalesce_;
  QElapsedTimer started_;
  qint64 firstTokenAt_ = -1;
  std::int64_t tokensSeen_ = 0;
  double tokensPerSecond_ = 0;
  ExpertStreaming expertsAtStart_;
  QString expertText_;
  double ttftMs_ = 0;
  qint64 contextUsed_ = 0;

  std::mutex mutex_;  // guards pending_ and handle_ between the engine, pool and GUI threads
  Pending pending_;
};

}  // namespace day0::app

Q_DECLARE_METATYPE(day0::app::GenerationOutcome)
