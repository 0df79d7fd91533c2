#include "gui/selftest.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QQuickWindow>
#include <cstdio>

#include "bridge/engine_bridge.h"
#include "gui/app_controller.h"
#include "gui/app_settings.h"
#include "gui/chat_controller.h"
#include "gui/conversation_list_model.h"
#include "gui/knowledge_controller.h"
#include "gui/message_list_model.h"
#include "gui/model_manager.h"

namespace day0::app {

namespace {
constexpr int kDeadlineMs = 120'000;
const char* const kPrompt = "How do I read a file in Python?";

// The knowledge page's folder: a few notes and a source file about the question.
const struct {
  const char* path;
  const char* text;
} kNotes[] = {
    {"README.md", "# Model notes\n\nReading notes on sparse models, and a toy router.\n"},
    {"notes/mixture-of-experts.md",
     "# Mixture-of-Experts\n\nA Mixture-of-Experts (MoE) model replaces each feed-forward block with many\n"
     "experts and a router. For every token the router picks a few experts (top-k), so only a\n"
     "small part of the weights is active per token: a large model at the cost of a small one.\n\n"
     "# Experts in MXFP4\n\ngpt-oss and GLM ship their experts in MXFP4: 4-bit values with one shared\n"
     "exponent per block of 32.\n"},
    {"src/router.py",
     "import numpy as np\n\n\ndef route(logits, k=4):\n    \"\"\"Top-k routing of one token over the experts.\"\"\"\n"
     "    top = np.argsort(logits)[-k:][::-1]\n    weights = np.exp(logits[top] - logits[top].max())\n"
     "    return top, weights / weights.sum()\n"},
};
// The rendering page's reply.
const char* const kRenderingQuestion = "How do I compute the mean and variance of a list, and how fast is it?";
const char* const kRenderingReply =
    "Both fit in **one pass** with Welford's method. For samples $x_1, \\dots, x_n$ the mean is "
    "$\\mu = \\frac{1}{n}\\sum_i x_i$ and the variance\n\n"
    "$$\n\\sigma^2 = \\frac{1}{n-1} \\sum_{i=1}^{n} \\left(x_i - \\mu\\right)^2\n$$\n\n"
    "```python\n"
    "def mean_var(xs: list[float]) -> tuple[float, float]:\n"
    "    \"\"\"Welford: numerically stable, one pass.\"\"\"\n"
    "    n, mean, m2 = 0, 0.0, 0.0\n"
    "    for x in xs:\n"
    "        n += 1\n"
    "        delta = x - mean\n"
    "        mean += delta / n\n"
    "        m2 += delta * (x - mean)  # uses the new mean\n"
    "    return mean, m2 / (n - 1)\n"
    "```\n\n"
    "| Method | Passes | Stable |\n"
    "|---|---|---|\n"
    "| Naive $\\sum x^2 - n\\mu^2$ | 1 | no |\n"
    "| Two-pass | 2 | yes |\n"
    "| Welford | 1 | yes |\n\n"
    "> Each step costs $O(1)$, so the whole list is $O(n)$ time and $O(1)$ memory.";

}  // namespace

SelfTest::SelfTest(QQuickWindow* window, AppController* controller, QString screenshot, QString page, QObject* parent)
    : QObject(parent),
      window_(window),
      controller_(controller),
      screenshot_(std::move(screenshot)),
      page_(std::move(page)) {}

void SelfTest::start() {
  clock_.start();
  deadline_.setSingleShot(true);
  deadline_.setInterval(kDeadlineMs);
  connect(&deadline_, &QTimer::timeout, this, [this]() {
    finishWith(sent_ ? QStringLiteral("the reply did not finish within %1 s").arg(kDeadlineMs / 1000)
                     : QStringLiteral("the model did not load within %1 s").arg(kDeadlineMs / 1000));
  });
  deadline_.start();
  ModelManager* models = controller_->models();
  ChatController* chat = controller_->chat();
  connect(models, &ModelManager::modelReady, this, &SelfTest::sendMessage);
  connect(models, &ModelManager::errorOccurred, this, [this](const QString& m) {
    if (!sent_) finishWith(QStringLiteral("the model did not load: ") + m);
  });
  connect(controller_->bridge(), &EngineBridge::textArrived, this, [this]() { ++streamedChunks_; });
  connect(chat, &ChatController::errorOccurred, this, [this](const QString& m) { finishWith(m); });
  connect(chat, &ChatController::replyFinished, this, [this, chat](qint64 id, bool ok) {
    if (!ok) return finishWith(QStringLiteral("the engine reported an error"));
    const storage::Message* reply = chat->messages()->find(id);
    if (reply == nullptr || (reply->content.empty() && reply->reasoning.empty()))
      return finishWith(QStringLiteral("the reply is empty"));
    if (streamedChunks_ == 0) return finishWith(QStringLiteral("no text was streamed"));
    std::printf("day0 --selftest: reply of %zu characters streamed in %lld chunks (%lld ms since start)\n",
                reply->content.size() + reply->reasoning.size(), static_cast<long long>(streamedChunks_),
                static_cast<long long>(clock_.elapsed()));
    // The conversation list shows it once the history has listed it again.
    connect(chat, &ChatController::conversationsLoaded, this, [this, chat]() {
      if (chat->conversations()->rowCount() > 0) capture();
    });
    chat->refreshConversations();
  });
  if (page_ == QLatin1String("rendering")) return showRendering();
  if (page_.startsWith(QLatin1String("knowledge"))) prepareKnowledge();
  if (models->loaded()) {
    sendMessage();
  } else if (!models->loading()) {
    if (models->demoModelPath().isEmpty())
      return finishWith(QStringLiteral("no model: the demo model was not found and --model was not given"));
    models->load(models->demoModelPath());
  }
}

void SelfTest::showRendering() {
  ChatController* chat = controller_->chat();
  storage::HistoryStore& store = chat->store();
  storage::NewConversation c;
  c.title = "Mean and variance in one pass";
  const auto conversation = store.create_conversation(c).get();
  if (!conversation.is_ok()) return finishWith(QStringLiteral("cannot create the conversation"));
  storage::NewMessage question;
  question.conversation_id = conversation->id;
  question.content = kRenderingQuestion;
  const auto asked = store.add_message(question).get();
  if (!asked.is_ok()) return finishWith(QStringLiteral("cannot store the question"));
  storage::NewMessage answer;
  answer.conversation_id = conversation->id;
  answer.parent_id = asked->id;
  answer.role = storage::Role::assistant;
  answer.content = kRenderingReply;
  if (!store.add_message(answer).get().is_ok()) return finishWith(QStringLiteral("cannot store the reply"));
  sent_ = true;
  connect(chat, &ChatController::conversationsLoaded, this, [this, chat, id = conversation->id]() {
    if (done_ || chat->conversations()->rowCount() == 0) return;
    chat->openConversation(id);
    capture();
  });
  chat->refreshConversations();
}

void SelfTest::prepareKnowledge() {
  knowledgeReady_ = false;
  const QDir root(controller_->settings()->activeDataFolder() + QStringLiteral("/selftest-notes/model-notes"));
  for (const auto& note : kNotes) {
    const QString path = root.filePath(QString::fromLatin1(note.path));
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(note.text) < 0)
      return finishWith(QStringLiteral("cannot write ") + path);
  }
  // A document attached to the message, beside the folder.
  controller_->chat()->attachData(
      QByteArrayLiteral("Reading list\n\n- Shazeer et al., Outrageously Large Neural Networks (2017)\n"
                        "- Fedus et al., Switch Transformers (2021)\n"),
      QStringLiteral("reading-list.txt"));
  KnowledgeController* knowledge = controller_->knowledge();
  connect(knowledge, &KnowledgeController::folderIndexed, this, [this](qint64 id, bool ok) {
    if (!ok) return finishWith(QStringLiteral("the notes folder was not indexed"));
    controller_->chat()->setFolderEnabled(id, true);
    knowledgeReady_ = true;
    if (controller_->models()->loaded()) sendMessage();
  });
  knowledge->addFolder(root.absolutePath());
}

void SelfTest::sendMessage() {
  if (sent_ || done_ || !knowledgeReady_) return;
  sent_ = true;
  // The folder is printed so an installed copy can be seen to use its own share/day0, not a source tree.
  const ModelManager* models = controller_->models();
  std::printf("day0 --selftest: %s loaded from %s on %s (%lld ms)\n", qPrintable(models->loadedName()),
              qPrintable(models->loadedDir()), qPrintable(models->device()), static_cast<long long>(clock_.elapsed()));
  if (!controller_->chat()->send(QString::fromUtf8(kPrompt))) finishWith(QStringLiteral("the message was not sent"));
}

void SelfTest::capture() {
  if (done_) return;
  if (!page_.isEmpty() && page_ != QLatin1String("chat"))
    QMetaObject::invokeMethod(window_, "openPage", Q_ARG(QVariant, page_));
  // Let the view lay out and render the last text (and any dialog) before grabbing.
  QTimer::singleShot(700, this, [this]() {
    const QImage image = window_->grabWindow();
    if (image.isNull() || image.width() < 100 || image.height() < 100)
      return finishWith(QStringLiteral("the window rendered no usable frame"));
    if (!screenshot_.isEmpty() && !image.save(screenshot_, "PNG"))
      return finishWith(QStringLiteral("cannot write ") + screenshot_);
    done_ = true;
    std::printf("day0 --selftest: ok (%dx%d frame%s%s)\n", image.width(), image.height(),
                screenshot_.isEmpty() ? "" : ", saved to ", qPrintable(screenshot_));
    std::fflush(stdout);
    QCoreApplication::exit(0);
  });
}

void SelfTest::finishWith(const QString& failure) {
  if (done_) return;
  done_ = true;
  std::fprintf(stderr, "day0 --selftest: FAILED: %s\n", qPrintable(failure));
  QCoreApplication::exit(1);
}

}  // namespace day0::app
