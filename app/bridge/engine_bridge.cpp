#include "bridge/engine_bridge.h"

#include <fcntl.h>
#include <unistd.h>

#include <QBuffer>
#include <QCryptographicHash>
#include <QDir>
#include <QFileInfo>
#include <QImage>
#include <QImageReader>
#include <QLocale>
#include <QMetaObject>
#include <QRegularExpression>
#include <QSaveFile>
#include <QThreadPool>
#include <algorithm>
#include <chrono>

#include "day0/devices.h"

namespace day0::app {

struct EngineBridge::Loaded {
  quint64 generation = 0;
  QString dir;
  QString device;
  QString notice;
  QString error;
  std::shared_ptr<Model> model;
  std::shared_ptr<const ChatFormatter> formatter;
  std::optional<remote::RemoteClient> remote;  // set for a remote endpoint instead of model
  RemoteEndpoint endpoint;
};

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

QString formatGiB(std::uint64_t bytes) {
  return QStringLiteral("%1 GiB").arg(static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0), 0, 'f', 1);
}

// Reads the checkpoint's shards once so their pages are in memory before the first request.
// `report(done, total)` is called every few megabytes; returns false when cancelled.
bool warm_shards(const QStringList& files, qint64 total, const std::atomic<bool>& cancel,
                 const std::function<void(qint64, qint64)>& report) {
  constexpr std::size_t kChunk = 8u << 20;
  std::vector<char> buffer(kChunk);
  qint64 done = 0;
  for (const QString& file : files) {
    const int fd = ::open(QFile::encodeName(file).constData(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;  // the engine mapped it a moment ago; a vanished file fails later, clearly
    while (true) {
      if (cancel.load()) {
        ::close(fd);
        return false;
      }
      const ssize_t n = ::read(fd, buffer.data(), buffer.size());
      if (n <= 0) break;
      done += n;
      report(std::min(done, total), total);
    }
    ::close(fd);
  }
  report(total, total);
  return true;
}

// Positions `image` takes in `model` beyond the one image token of its placeholder (its size is
// read from the header only).
Result<std::int64_t> image_extra_tokens(const Model& model, const ImageRef& image) {
  QByteArray data = image.bytes ? image.bytes() : QByteArray();
  QBuffer buffer(&data);
  buffer.open(QIODevice::ReadOnly);
  QImageReader reader(&buffer);  // the pixels as stored, as the engine decodes them
  const QSize size = reader.size();
  if (!size.isValid()) return error(ErrorCode::unsupported, "an attached image cannot be decoded");
  DAY0_ASSIGN_OR_RETURN(const std::int64_t positions, image_token_count(model, size.width(), size.height()));
  return positions - 1;
}

// An image of a request as a file the engine reads: PNG and JPEG as they are, other formats
// (WebP, GIF, BMP, validated when attached) converted to PNG. Named by content, so a conversation
// writes each image once.
Result<std::filesystem::path> image_file(const ImageRef& image, const QTemporaryDir& dir) {
  if (!dir.isValid())
    return error(ErrorCode::io_error, "no temporary folder for the images: " + dir.errorString().toStdString());
  const QByteArray data = image.bytes ? image.bytes() : QByteArray();
  if (data.isEmpty()) return error(ErrorCode::not_found, "an image of this conversation is missing from the history");
  const bool png = data.startsWith("\x89PNG\r\n\x1a\n");
  const bool jpeg = data.startsWith("\xff\xd8\xff");
  const QString name = QString::fromLatin1(QCryptographicHash::hash(data, QCryptographicHash::Sha256).toHex()) +
                       (jpeg ? QStringLiteral(".jpg") : QStringLiteral(".png"));
  const QString path = dir.filePath(name);
  if (!QFileInfo::exists(path)) {
    QByteArray bytes = data;
    if (!png && !jpeg) {
      QImage decoded;
      if (!decoded.loadFromData(data)) return error(ErrorCode::unsupported, "an attached image cannot be decoded");
      QBuffer buffer(&bytes);
      bytes.clear();
      buffer.open(QIODevice::WriteOnly);
      if (!decoded.convertToFormat(QImage::Format_RGB888).save(&buffer, "PNG"))
        return error(ErrorCode::internal, "an attached image cannot be converted to PNG");
    }
    QSaveFile out(path);
    if (!out.open(QIODevice::WriteOnly) || out.write(bytes) != bytes.size() || !out.commit())
      return error(ErrorCode::io_error, "cannot write the image to " + path.toStdString());
  }
  return std::filesystem::path(path.toStdString());
}

}  // namespace

EngineBridge::EngineBridge(int threads, QObject* parent) : QObject(parent) {
  qRegisterMetaType<day0::app::GenerationOutcome>();
  EngineOptions options;
  options.threads = threads;
  engine_ = Engine::create(options);
  coalesce_.setInterval(25);
  connect(&coalesce_, &QTimer::timeout, this, &EngineBridge::drain);
}

EngineBridge::~EngineBridge() {
  if (loadCancel_) loadCancel_->store(true);
  std::shared_ptr<RequestHandle> handle;
  {
    std::lock_guard lock(mutex_);
    stopRequested_ = true;
    handle = handle_;
  }
  if (handle) {
    handle->cancel();
    handle->wait();
  }
  if (remoteCancel_) remoteCancel_->cancel();
  QThreadPool::globalInstance()->waitForDone();
  // Events still posted to this object are discarded with it; the engine thread stops here.
  session_.reset();
  model_.reset();
  engine_.reset();
}

std::pair<quint64, std::shared_ptr<std::atomic<bool>>> EngineBridge::beginLoad(const QString& phase) {
  if (generating()) stop();
  if (loadCancel_) loadCancel_->store(true);
  const quint64 generation = ++loadGeneration_;
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  loadCancel_ = cancel;
  loading_ = true;
  emit loadStarted();
  emit loadProgress(0, 0, phase);
  return {generation, cancel};
}

void EngineBridge::loadModel(const QString& dir, const QString& device, qint64 contextLength) {
  const auto [generation, cancel] = beginLoad(tr("Checking the checkpoint…"));
  Engine* engine = engine_.get();
  QThreadPool::globalInstance()->start([this, engine, dir, device, contextLength, generation, cancel]() {
    auto loaded = std::make_shared<Loaded>();
    loaded->generation = generation;
    loaded->dir = dir;
    loaded->device = device.isEmpty() ? QStringLiteral("cpu") : device;
    const auto post = [this, loaded]() {
      QMetaObject::invokeMethod(
          this, [this, loaded]() { onLoaded(loaded); }, Qt::QueuedConnection);
    };
    if (loaded->device != QLatin1String("cpu")) {
      // Without a usable GPU, say so and use the CPU rather than asking the engine for one.
      const DeviceReport devices = discover_devices();
      if (devices.gpus.empty()) {
        loaded->notice = tr("%1 is not available: %2. Day0 uses the CPU instead.")
                             .arg(loaded->device, qs(devices.gpu_problem).remove(QRegularExpression("[.\\s]+$")));
        loaded->device = QStringLiteral("cpu");
      }
    }
    ModelOptions options;
    options.device = loaded->device.toStdString();
    options.max_context = std::max<qint64>(0, contextLength);
    auto model = engine->load_model(dir.toStdString(), options);
    if (!model && loaded->device != QLatin1String("cpu")) {
      loaded->notice = tr("%1 cannot run this model: %2. Day0 uses the CPU instead.")
                           .arg(loaded->device, qs(model.status().message()).remove(QRegularExpression("[.\\s]+$")));
      loaded->device = QStringLiteral("cpu");
      options.device = "cpu";
      model = engine->load_model(dir.toStdString(), options);
    }
    if (!model) {
      loaded->error = qs(model.status().message());
      post();
      return;
    }
    auto formatter = ChatFormatter::load(dir.toStdString());
    if (!formatter) {
      loaded->error = tr("This model folder cannot be used for chat: %1").arg(qs(formatter.status().message()));
      post();
      return;
    }
    loaded->model = *model;
    loaded->formatter = std::make_shared<const ChatFormatter>(std::move(*formatter));
    if (const ExpertStreaming experts = describe(**model).experts; experts.streamed) {
      const QString streaming =
          tr("This model is larger than the memory Day0 may use: its experts (%1) are read from disk as tokens "
             "need them, through a cache of %2, so replies are slower than with the whole model in memory.")
              .arg(formatGiB(experts.expert_bytes), formatGiB(experts.cache_bytes));
      loaded->notice = loaded->notice.isEmpty() ? streaming : loaded->notice + QStringLiteral(" ") + streaming;
    }

    QStringList shards;
    qint64 total = 0;
    for (const QFileInfo& f : QDir(dir).entryInfoList({QStringLiteral("*.safetensors")}, QDir::Files, QDir::Name)) {
      shards << f.absoluteFilePath();
      total += f.size();
    }
    const auto available = static_cast<qint64>(available_memory_bytes());
    if (available > 0 && total > available / 2) {
      QMetaObject::invokeMethod(
          this,
          [this, total]() {
            emit loadProgress(total, total,
                              tr("Mapped: larger than free memory, weights are read from disk as needed"));
          },
          Qt::QueuedConnection);
    } else {
      auto last = std::chrono::steady_clock::now() - std::chrono::seconds(1);
      const bool finished = warm_shards(shards, total, *cancel, [&](qint64 done, qint64 all) {
        const auto now = std::chrono::steady_clock::now();
        if (done < all && now - last < std::chrono::milliseconds(50)) return;
        last = now;
        QMetaObject::invokeMethod(
            this, [this, done, all]() { emit loadProgress(done, all, tr("Reading the weights")); },
            Qt::QueuedConnection);
      });
      if (!finished) loaded->error = tr("Loading was cancelled.");
    }
    post();
  });
}

QString EngineBridge::remoteId(const QString& url, const QString& model) {
  return QStringLiteral("%1 @ %2").arg(model, url);
}

RemoteEndpoint EngineBridge::remoteEndpoint() const { return remote_ ? remoteEndpoint_ : RemoteEndpoint{}; }

void EngineBridge::connectRemote(const RemoteEndpoint& endpoint) {
  const auto [generation, cancel] = beginLoad(tr("Connecting to %1…").arg(endpoint.url));
  QThreadPool::globalInstance()->start([this, endpoint, generation, cancel]() {
    auto loaded = std::make_shared<Loaded>();
    loaded->generation = generation;
    loaded->device = QStringLiteral("remote");
    loaded->endpoint = endpoint;
    loaded->endpoint.url = endpoint.url.trimmed();
    loaded->endpoint.model = endpoint.model.trimmed();
    loaded->dir = remoteId(loaded->endpoint.url, loaded->endpoint.model);
    const auto post = [this, loaded]() {
      QMetaObject::invokeMethod(
          this, [this, loaded]() { onLoaded(loaded); }, Qt::QueuedConnection);
    };
    auto client =
        remote::RemoteClient::create({loaded->endpoint.url.toStdString(), loaded->endpoint.apiKey.toStdString(),
                                      loaded->endpoint.model.toStdString()});
    if (!client) {
      loaded->error = qs(client.status().message());
      return post();
    }
    // The model list proves the address and the key; servers that keep it private (404) are
    // still usable when the model is named.
    auto names = client->list_models();
    if (!names) {
      const bool noList = names.status().message().find("HTTP 404") != std::string::npos;
      if (!noList || loaded->endpoint.model.isEmpty()) {
        loaded->error = qs(names.status().message());
        return post();
      }
      loaded->notice = tr("%1 does not list its models; Day0 uses the name you gave, %2.")
                           .arg(loaded->endpoint.url, loaded->endpoint.model);
    } else if (loaded->endpoint.model.isEmpty()) {
      if (names->empty()) {
        loaded->error = tr("%1 lists no models: name the model to use.").arg(loaded->endpoint.url);
        return post();
      }
      loaded->endpoint.model = qs(names->front());
      loaded->dir = remoteId(loaded->endpoint.url, loaded->endpoint.model);
      client = remote::RemoteClient::create({loaded->endpoint.url.toStdString(), loaded->endpoint.apiKey.toStdString(),
                                             loaded->endpoint.model.toStdString()});
    } else if (std::find(names->begin(), names->end(), loaded->endpoint.model.toStdString()) == names->end()) {
      QStringList offered;
      for (const auto& n : *names) offered << qs(n);
      loaded->error = tr("%1 does not serve a model named %2; it lists: %3")
                          .arg(loaded->endpoint.url, loaded->endpoint.model,
                               offered.isEmpty() ? tr("none") : offered.join(QStringLiteral(", ")));
      return post();
    }
    if (cancel->load())
      loaded->error = tr("Connecting was cancelled.");
    else
      loaded->remote.emplace(std::move(*client));
    post();
  });
}

void EngineBridge::cancelLoad() {
  if (!loading_) return;
  if (loadCancel_) loadCancel_->store(true);
}

void EngineBridge::onLoaded(std::shared_ptr<Loaded> loaded) {
  if (loaded->generation != loadGeneration_) return;  // superseded by a later load or an unload
  loading_ = false;
  if (!loaded->error.isEmpty()) {
    emit loadFailed(loaded->dir, loaded->error);
    return;
  }
  dropModel();
  if (loaded->remote) {
    remote_ = std::move(loaded->remote);
    remoteEndpoint_ = loaded->endpoint;
    summary_ = {};
    summary_.model_type = "remote";
    summary_.family = "remote";
    summary_.device = "remote";
  } else {
    model_ = loaded->model;
    formatter_ = loaded->formatter;
    session_ = engine_->new_session(model_);
    summary_ = describe(*model_);
    imagePlaceholder_ = formatter_->image_placeholder(summary_);
  }
  modelDir_ = loaded->dir;
  device_ = loaded->device;
  contextUsed_ = 0;
  tokensPerSecond_ = 0;
  expertText_.clear();
  ttftMs_ = 0;
  emit statsChanged();
  emit modelLoaded(modelDir_, device_, loaded->notice);
}

void EngineBridge::unloadModel() {
  ++loadGeneration_;
  if (loadCancel_) loadCancel_->store(true);
  const bool wasLoading = loading_;
  loading_ = false;
  if (generating()) stop();
  if (!hasModel() && !wasLoading) return;
  dropModel();
  summary_ = {};
  modelDir_.clear();
  device_.clear();
  contextUsed_ = 0;
  tokensPerSecond_ = 0;
  expertText_.clear();
  ttftMs_ = 0;
  emit statsChanged();
  emit modelUnloaded();
}

void EngineBridge::dropModel() {
  session_.reset();
  model_.reset();
  formatter_.reset();
  remote_.reset();
  remoteEndpoint_ = {};
  imagePlaceholder_.clear();
}

knowledge::TokenCounter EngineBridge::tokenCounter() const {
  if (formatter_) {
    return [formatter = formatter_](std::string_view text) -> std::int64_t {
      auto ids = formatter->tokenizer().encode(text, false);
      return ids ? static_cast<std::int64_t>(ids->size()) : static_cast<std::int64_t>(text.size());
    };
  }
  return [](std::string_view text) { return static_cast<std::int64_t>((text.size() + 2) / 3); };
}

qint64 EngineBridge::contextWindow() const {
  if (remote_) return kRemoteContextWindow;
  return summary_.max_context;
}

quint64 EngineBridge::generate(std::vector<ContextMessage> context, const GenerationParams& params) {
  if (!hasModel() || current_ != 0) return 0;
  const quint64 id = nextRequest_++;
  current_ = id;
  {
    std::lock_guard lock(mutex_);
    pending_ = {};
    handle_.reset();
  }
  stopRequested_ = false;
  firstTokenAt_ = -1;
  tokensSeen_ = 0;
  tokensPerSecond_ = 0;
  ttftMs_ = 0;
  // Streamed experts: what this reply reads is the difference from here (the engine thread is
  // idle between requests, so the cache's figures are read without waiting on it).
  if (model_ && summary_.experts.streamed) expertsAtStart_ = describe(*model_).experts;
  started_.start();
  coalesce_.start();
  if (remote_) {
    generateRemote(id, std::move(context), params);
    return id;
  }

  if (!imageDir_) imageDir_ = std::make_shared<QTemporaryDir>();
  Request request;
  request.sampling.temperature = params.temperature;
  request.sampling.top_p = params.top_p;
  request.sampling.top_k = params.top_k;
  request.sampling.min_p = params.min_p;
  request.sampling.repetition_penalty = params.repetition_penalty;
  request.sampling.seed = params.seed;
  request.stop.max_new_tokens = params.max_new_tokens;
  request.stop.stop_strings = params.stop_strings;
  Engine* engine = engine_.get();
  // Formatting long conversations takes a while (template + tokenizer): off the GUI thread.
  QThreadPool::globalInstance()->start([this, id, engine, request = std::move(request), context = std::move(context),
                                        formatter = formatter_, session = session_, placeholder = imagePlaceholder_,
                                        model = model_,
                                        imageDir = imageDir_, maxContext = summary_.max_context,
                                        overflow = params.overflow]() mutable {
    const auto fail = [this](const Status& status) {
      Event e;
      e.kind = Event::Kind::error;
      e.reason = DoneReason::error;
      e.status = status;
      std::lock_guard lock(mutex_);
      pending_.last = e;
      QMetaObject::invokeMethod(
          this, [this]() { finishRequest(); }, Qt::QueuedConnection);
    };
    // Each image becomes the model's placeholder before its message's text (in order, as the
    // engine pairs them) and a file the engine decodes (for the messages the prompt keeps).
    std::vector<ChatMessage> messages;
    messages.reserve(context.size());
    for (auto& m : context) {
      std::string prefix;
      m.message.extra_tokens = 0;
      for (const auto& image : m.images) {
        prefix += placeholder;
        // The image takes the positions the vision encoder gives it, not its placeholder's.
        auto extra = image_extra_tokens(*model, image);
        if (!extra) return fail(extra.status());
        m.message.extra_tokens += *extra;
      }
      m.message.content = prefix + m.message.content;
      messages.push_back(m.message);
    }
    auto fitted = formatter->encode_fitting(messages, maxContext, request.stop.max_new_tokens, overflow);
    if (!fitted) return fail(fitted.status());
    if (!fitted->fits) {
      const QLocale locale;
      return fail(error(
          ErrorCode::invalid_argument,
          overflow == ContextOverflow::stop
              ? tr("the conversation is %1 tokens long and the model's context holds %2. Start a new chat, or "
                   "choose \"Truncate the middle\" or \"Rolling window\" for long conversations in this "
                   "chat's settings or in Settings.")
                    .arg(locale.toString(static_cast<qint64>(fitted->full_tokens)), locale.toString(static_cast<qint64>(maxContext)))
                    .toStdString()
              : tr("the last message (with the system prompt) takes %1 tokens, too many for the model's context "
                   "of %2 with room for the reply; shorten it or lower the reply length in Settings.")
                    .arg(locale.toString(static_cast<qint64>(fitted->positions)), locale.toString(static_cast<qint64>(maxContext)))
                    .toStdString()));
    }
    for (const std::size_t i : fitted->kept)
      for (const auto& image : context[i].images) {
        auto file = image_file(image, *imageDir);
        if (!file) return fail(file.status());
        request.images.push_back(std::move(*file));
      }
    if (fitted->dropped > 0) {
      const int dropped = static_cast<int>(fitted->dropped);
      QMetaObject::invokeMethod(
          this, [this, id, dropped]() { emit contextTrimmed(id, dropped); }, Qt::QueuedConnection);
    }
    request.context = std::move(fitted->tokens);
    if (promptTap_) {
      const std::vector<std::uint32_t> ids(request.context.begin(), request.context.end());
      const QString text = qs(formatter->tokenizer().decode(ids));
      const auto count = static_cast<qint64>(ids.size());
      QMetaObject::invokeMethod(
          this, [this, id, text, count]() { emit promptSubmitted(id, text, count); }, Qt::QueuedConnection);
    }
    request.stop.extra_stop_ids = formatter->turn_end_ids();
    std::lock_guard lock(mutex_);
    if (stopRequested_) {
      Event e;
      e.kind = Event::Kind::done;
      e.reason = DoneReason::cancelled;
      pending_.last = e;
      QMetaObject::invokeMethod(
          this, [this]() { finishRequest(); }, Qt::QueuedConnection);
      return;
    }
    handle_ = engine->submit(session, std::move(request), [this](const Event& event) {
      std::lock_guard lock(mutex_);
      if (event.kind == Event::Kind::progress) {
        pending_.prefill.emplace(event.prefill_done, event.prefill_total);
        return;
      }
      for (const auto& piece : event.text) {
        if (piece.channel == OutputChannel::answer)
          pending_.content += piece.text;
        else
          pending_.reasoning += piece.text;
      }
      if (event.kind == Event::Kind::token) {
        ++pending_.tokens;
        return;
      }
      pending_.last = event;
      QMetaObject::invokeMethod(
          this, [this]() { finishRequest(); }, Qt::QueuedConnection);
    });
  });
  return id;
}

void EngineBridge::generateRemote(quint64 id, std::vector<ContextMessage> context, const GenerationParams& params) {
  auto cancel = std::make_shared<remote::CancelToken>();
  {
    std::lock_guard lock(mutex_);
    remoteCancel_ = cancel;
  }
  remote::RemoteSampling sampling;
  sampling.temperature = params.temperature;
  sampling.top_p = params.top_p;
  sampling.max_tokens = params.max_new_tokens;
  sampling.seed = params.seed;
  sampling.stop = params.stop_strings;
  QThreadPool::globalInstance()->start([this, id, cancel, sampling, client = *remote_,
                                        context = std::move(context)]() mutable {
    const auto finish = [&](const Event& e) {
      std::lock_guard lock(mutex_);
      if (remoteCancel_ == cancel) remoteCancel_.reset();
      pending_.last = e;
      QMetaObject::invokeMethod(
          this,
          [this, id]() {
            if (current_ == id) finishRequest();
          },
          Qt::QueuedConnection);
    };
    const auto fail = [&](const Status& status) {
      Event e;
      e.kind = Event::Kind::error;
      e.reason = DoneReason::error;
      e.status = status;
      finish(e);
    };
    std::vector<remote::RemoteMessage> messages;
    messages.reserve(context.size());
    for (auto& m : context) {
      remote::RemoteMessage r;
      r.role = std::move(m.message.role);
      r.content = std::move(m.message.content);
      r.reasoning = std::move(m.message.reasoning);
      for (const auto& image : m.images) {
        const QByteArray data = image.bytes ? image.bytes() : QByteArray();
        if (data.isEmpty())
          return fail(error(ErrorCode::not_found, "an image of this conversation is missing from the history"));
        r.image_urls.push_back("data:" + image.mime_type.toStdString() + ";base64," + data.toBase64().toStdString());
      }
      messages.push_back(std::move(r));
    }
    context.clear();
    const auto reply = client.stream_chat(
        messages, sampling,
        [this](const OutputPiece& piece) {
          std::lock_guard lock(mutex_);
          (piece.channel == OutputChannel::answer ? pending_.content : pending_.reasoning) += piece.text;
          ++pending_.tokens;
          return true;
        },
        cancel);
    if (!reply) return fail(reply.status());
    Event e;
    e.kind = Event::Kind::done;
    const std::string& why = reply->finish_reason;
    e.reason = why == "cancelled" ? DoneReason::cancelled : why == "length" ? DoneReason::max_tokens : DoneReason::eos;
    e.stats.context_tokens = std::max<std::int64_t>(reply->prompt_tokens, 0);
    e.stats.generated_tokens = std::max<std::int64_t>(reply->completion_tokens, 0);
    e.stats.time_to_first_token_ms = reply->time_to_first_token_ms;
    e.stats.decode_tokens_per_second = reply->tokens_per_second;
    finish(e);
  });
}

void EngineBridge::stop() {
  stopRequested_ = true;
  std::lock_guard lock(mutex_);
  if (handle_) handle_->cancel();
  if (remoteCancel_) remoteCancel_->cancel();
}

void EngineBridge::drain() {
  if (current_ == 0) return;
  std::string content, reasoning;
  std::int64_t tokens = 0;
  std::optional<std::pair<std::int64_t, std::int64_t>> prefill;
  {
    std::lock_guard lock(mutex_);
    prefill.swap(pending_.prefill);
    content.swap(pending_.content);
    reasoning.swap(pending_.reasoning);
    tokens = pending_.tokens;
    pending_.tokens = 0;
  }
  if (prefill) emit prefillProgress(current_, prefill->first, prefill->second);
  if (tokens > 0) {
    const qint64 now = started_.elapsed();
    if (firstTokenAt_ < 0) {
      firstTokenAt_ = now;
      ttftMs_ = static_cast<double>(now);
      tokensSeen_ = 0;
    }
    tokensSeen_ += tokens;
    const double seconds = static_cast<double>(now - firstTokenAt_) / 1000.0;
    if (seconds > 0.05) tokensPerSecond_ = static_cast<double>(tokensSeen_ - 1) / seconds;
    emit statsChanged();
  }
  if (!content.empty() || !reasoning.empty()) emit textArrived(current_, qs(content), qs(reasoning));
}

void EngineBridge::finishRequest() {
  if (current_ == 0) return;
  drain();
  std::optional<Event> last;
  {
    std::lock_guard lock(mutex_);
    last.swap(pending_.last);
    handle_.reset();
  }
  if (!last) return;
  GenerationOutcome outcome;
  outcome.request = current_;
  outcome.stats = last->stats;
  outcome.reason = QString::fromLatin1(done_reason_name(last->reason));
  outcome.cancelled = last->reason == DoneReason::cancelled;
  if (last->kind == Event::Kind::error) {
    outcome.ok = false;
    outcome.message = qs(last->status.message());
  }
  current_ = 0;
  coalesce_.stop();
  if (last->stats.generated_tokens > 0) {
    ttftMs_ = last->stats.time_to_first_token_ms;
    tokensPerSecond_ = last->stats.decode_tokens_per_second;
  }
  contextUsed_ = last->stats.context_tokens + last->stats.generated_tokens;
  if (model_ && summary_.experts.streamed) {
    const ExpertStreaming now = describe(*model_).experts;
    const auto lookups = now.lookups - expertsAtStart_.lookups;
    const auto bytes = now.bytes_read - expertsAtStart_.bytes_read;
    const double seconds = now.read_seconds - expertsAtStart_.read_seconds;
    if (lookups > 0)
      expertText_ = tr("experts %1% in memory, %2 GB/s from disk")
                        .arg(qRound(100.0 * static_cast<double>(now.hits - expertsAtStart_.hits) /
                                    static_cast<double>(lookups)))
                        .arg(seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0.0, 0, 'f', 2);
  }
  emit statsChanged();
  emit generationFinished(outcome);
}

}  // namespace day0::app
