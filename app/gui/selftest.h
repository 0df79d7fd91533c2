#pragma once
// `day0 --selftest`: drives the real window end to end — the model loads, a message is sent,
// the reply streams into the view and the history — then saves a screenshot if asked and
// exits 0, or prints what failed and exits 1.
#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QTimer>

class QQuickWindow;

namespace day0::app {

class AppController;

class SelfTest : public QObject {
  Q_OBJECT
 public:
  SelfTest(QQuickWindow* window, AppController* controller, QString screenshot, QString page,
           QObject* parent = nullptr);
  void start();

 private:
  void sendMessage();
  // The knowledge page: a small folder of notes is written, indexed and switched on first.
  void prepareKnowledge();
  // The rendering page: a canned conversation (highlighted code, a table, math) is opened.
  void showRendering();
  void finishWith(const QString& failure);
  void capture();

  QQuickWindow* window_;
  AppController* controller_;
  QString screenshot_;
  QString page_;
  QTimer deadline_;
  QElapsedTimer clock_;
  bool sent_ = false;
  bool knowledgeReady_ = true;
  bool done_ = false;
  qint64 streamedChunks_ = 0;
};

}  // namespace day0::app
