// day0-cli chat in a terminal (a pseudo-terminal here): a paste longer than the canonical-mode
// line limit with newlines is one whole message, Ctrl+C stops a reply and twice quits, and the
// terminal's modes are restored afterwards.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <httplib.h>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "app/process_runner.h"

using day0::test::quiet_env;
using day0::test::run_program;

namespace {

const QString kCli = QStringLiteral(DAY0_BIN_DIR "/day0-cli");

// A child process on a pseudo-terminal; the test holds both ends.
struct PtyChild {
  int master = -1;
  int slave = -1;
  pid_t pid = -1;
  std::string output;  // everything the child wrote so far

  bool start(const QStringList& args) {
    if (openpty(&master, &slave, nullptr, nullptr, nullptr) != 0) return false;
    struct winsize ws = {40, 120, 0, 0};
    ioctl(slave, TIOCSWINSZ, &ws);
    const std::string program = kCli.toStdString();
    std::vector<std::string> words{program};
    for (const auto& a : args) words.push_back(a.toStdString());
    pid = fork();
    if (pid == 0) {
      setsid();
      ioctl(slave, TIOCSCTTY, 0);
      dup2(slave, 0);
      dup2(slave, 1);
      dup2(slave, 2);
      close(master);
      std::vector<char*> argv;
      for (auto& w : words) argv.push_back(w.data());
      argv.push_back(nullptr);
      setenv("DAY0_LOG_TO_FILE", "0", 1);
      execv(program.c_str(), argv.data());
      _exit(127);
    }
    fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
    return pid > 0;
  }

  // Writes `input` while reading the output (the echo would fill the pty otherwise) until the
  // output from `from` on contains `until` or timeout_ms passes.
  bool pump(const std::string& input, const std::string& until, std::size_t from, int timeout_ms = 60000) {
    std::size_t written = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < deadline) {
      if (written == input.size() && !until.empty() && output.find(until, from) != std::string::npos) return true;
      struct pollfd p = {master, static_cast<short>(POLLIN | (written < input.size() ? POLLOUT : 0)), 0};
      if (poll(&p, 1, 100) < 0) return false;
      if (p.revents & POLLIN) {
        char buf[65536];
        const ssize_t n = read(master, buf, sizeof buf);
        if (n > 0) output.append(buf, static_cast<std::size_t>(n));
      }
      if ((p.revents & POLLOUT) && written < input.size()) {
        const ssize_t n = write(master, input.data() + written, std::min<std::size_t>(1024, input.size() - written));
        if (n > 0) written += static_cast<std::size_t>(n);
      }
      if (p.revents & (POLLHUP | POLLERR)) break;
    }
    return until.empty() || output.find(until, from) != std::string::npos;
  }

  // Writes `input`, then waits for `until` after what earlier calls matched.
  std::size_t cursor = 0;
  bool expect(const std::string& input, const std::string& until, int timeout_ms = 60000) {
    if (!pump(input, until, cursor, timeout_ms)) return false;
    cursor = output.find(until, cursor) + until.size();
    return true;
  }
  std::string since() const { return output.substr(std::min(cursor, output.size())); }

  // Waits for the child to exit; returns its status (or -1), reading its output meanwhile.
  int wait_exit(int timeout_ms = 30000) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < deadline) {
      pump("", "", 0, 50);
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        return status;
      }
    }
    return -1;
  }

  ~PtyChild() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    if (master >= 0) close(master);
    if (slave >= 0) close(slave);
  }
};

QStringList user_messages(const QString& db) {
  const auto r = run_program(kCli, {"history", "export", "--format", "json", "--db", db}, quiet_env());
  QStringList user;
  for (const auto c : QJsonDocument::fromJson(r.out.toUtf8()).object()["conversations"].toArray())
    for (const auto m : c.toObject()["messages"].toArray())
      if (m.toObject()["role"].toString() == "user") user << m.toObject()["content"].toString();
  return user;
}

}  // namespace

class TestCliTerminal : public QObject {
  Q_OBJECT
 private slots:
  void pasteIsOneWholeMessageAndCtrlCTwiceQuits() {
    QTemporaryDir tmp;
    const QString demo = tmp.filePath("demo");
    QCOMPARE(run_program(kCli, {"make-demo-model", demo}, quiet_env()).exit_code, 0);
    const QString db = tmp.filePath("history.db");
    PtyChild child;
    QVERIFY(child.start({"chat", "--model", demo, "--max-new-tokens", "2", "--threads", "2", "--db", db}));
    QVERIFY2(child.expect("", "> "), child.output.c_str());

    // The terminal is in non-canonical mode with bracketed paste on while the prompt waits.
    struct termios t;
    QVERIFY(tcgetattr(child.slave, &t) == 0);
    QVERIFY((t.c_lflag & ICANON) == 0);
    QVERIFY(child.output.find("\x1b[?2004h") != std::string::npos);

    // A 12 KB paste of many lines, CRLF as a terminal sends it, then Enter.
    std::string text;
    for (int i = 0; text.size() < 12000; ++i) text += "pasted line " + std::to_string(i) + " \xc3\xa9t\xc3\xa9\n";
    text += "last";
    std::string crlf;
    for (const char c : text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
    QVERIFY2(child.expect("\x1b[200~" + crlf + "\x1b[201~\r", " tokens, "), child.since().c_str());
    QVERIFY(child.expect("", "> "));

    // A typed line with a backspace, then """ for a multi-line message.
    QVERIFY(child.expect("hellp\x7fo\r", " tokens, "));
    QVERIFY(child.expect("", "> "));
    QVERIFY(child.expect("\"\"\"\rone\rtwo\r\"\"\"\r", " tokens, "));
    QVERIFY(child.expect("", "> "));
    QVERIFY(child.expect("/frobnicate\r", "unknown command /frobnicate; /help lists them"));
    QVERIFY(child.expect("", "> "));

    // Ctrl+C at the prompt: a hint, then a second one quits cleanly.
    QVERIFY(child.expect("\x03", "Ctrl+C again"));
    QVERIFY(child.pump("\x03", "", 0, 200));
    const int status = child.wait_exit();
    QVERIFY2(WIFEXITED(status) && WEXITSTATUS(status) == 0, child.output.c_str());

    // The terminal is as it was: canonical, echo, signal keys, bracketed paste off.
    QVERIFY(tcgetattr(child.slave, &t) == 0);
    QVERIFY((t.c_lflag & ICANON) != 0);
    QVERIFY((t.c_lflag & ECHO) != 0);
    QVERIFY((t.c_lflag & ISIG) != 0);
    QVERIFY(child.output.find("\x1b[?2004l") != std::string::npos);

    const QStringList user = user_messages(db);
    QCOMPARE(user.size(), 3);
    QCOMPARE(user[0].toUtf8().size(), qsizetype(text.size()));
    QVERIFY(user[0] == QString::fromStdString(text));
    QCOMPARE(user[1], QString("hello"));
    QCOMPARE(user[2], QString("one\ntwo"));
  }

  // A message longer than the terminal is wide is echoed in rows of the terminal's width; a
  // resize (SIGWINCH) draws the line again; Up brings back the message sent before, also in the
  // next run (the input history beside the history database, readable by its owner only).
  void longLinesWrapAndUpRecallsEarlierMessages() {
    QTemporaryDir tmp;
    const QString demo = tmp.filePath("demo");
    QCOMPARE(run_program(kCli, {"make-demo-model", demo}, quiet_env()).exit_code, 0);
    const QString db = tmp.filePath("history.db");
    std::string text;
    for (int i = 0; text.size() < 70; ++i) text += "word" + std::to_string(10 + i) + " ";
    text.pop_back();
    {
      PtyChild child;
      QVERIFY(child.start({"chat", demo, "--max-new-tokens", "2", "--threads", "2", "--db", db}));
      struct winsize narrow = {40, 30, 0, 0};
      ioctl(child.master, TIOCSWINSZ, &narrow);
      QVERIFY2(child.expect("", "> "), child.output.c_str());
      // Typed: "> " and 28 characters fill the first row, the next rows hold 30.
      QVERIFY2(child.expect(text, text.substr(0, 28) + "\r\n" + text.substr(28, 30) + "\r\n" + text.substr(58)),
               child.since().c_str());
      QVERIFY(child.expect("\r", " tokens, "));
      QVERIFY(child.expect("", "> "));
      // A resize while a line is open: drawn again.
      QVERIFY(child.expect("abc", "abc"));
      struct winsize wide = {40, 50, 0, 0};
      ioctl(child.master, TIOCSWINSZ, &wide);
      QVERIFY2(child.expect("", "\r\x1b[J> abc"), child.since().c_str());
      // Up: the message sent before, in rows of the new width; sent again with Enter.
      QVERIFY2(child.expect("\x1b[A", "> " + text.substr(0, 48) + "\r\n" + text.substr(48)), child.since().c_str());
      QVERIFY(child.expect("\r", " tokens, "));
      QVERIFY(child.expect("", "> "));
      QVERIFY(child.expect("\x03", "Ctrl+C again"));
      QVERIFY(child.pump("\x03", "", 0, 200));
      const int status = child.wait_exit();
      QVERIFY2(WIFEXITED(status) && WEXITSTATUS(status) == 0, child.output.c_str());
    }
    const std::filesystem::path file = tmp.filePath("chat_input_history").toStdString();
    QVERIFY(std::filesystem::exists(file));
    QCOMPARE(std::filesystem::status(file).permissions() & std::filesystem::perms::all,
             std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    {
      // The next run: Up brings back the last message of the one before.
      PtyChild child;
      QVERIFY(child.start({"chat", demo, "--max-new-tokens", "2", "--threads", "2", "--db", db}));
      QVERIFY2(child.expect("", "> "), child.output.c_str());
      QVERIFY(child.expect("\x1b[A\r", " tokens, "));
      QVERIFY(child.expect("", "> "));
      QVERIFY(child.expect("\x04", ""));
      const int status = child.wait_exit();
      QVERIFY2(WIFEXITED(status) && WEXITSTATUS(status) == 0, child.output.c_str());
    }
    const QStringList user = user_messages(db);
    QCOMPARE(user.size(), 3);
    for (const QString& m : user) QCOMPARE(m, QString::fromStdString(text));
  }

  // Ctrl+C during a reply (a long prefill here) stops it and returns to the prompt; Ctrl+C
  // again at the prompt leaves.
  void ctrlCStopsAReplyThenQuits() {
    QTemporaryDir tmp;
    const QString demo = tmp.filePath("demo");
    QCOMPARE(run_program(kCli, {"make-demo-model", demo}, quiet_env()).exit_code, 0);
    const QString db = tmp.filePath("history.db");
    PtyChild child;
    QVERIFY(child.start({"chat", demo, "--max-new-tokens", "4", "--threads", "2", "--db", db}));
    QVERIFY2(child.expect("", "> "), child.output.c_str());
    std::string prompt;
    unsigned x = 3;
    while (prompt.size() < 30000) {
      x = x * 1103515245u + 12345u;
      prompt += "abcdefghijklmnopqrstuvwxyz "[(x >> 16) % 27];
    }
    // Echoed in rows of the terminal's 120 columns: the last full row, then the rest.
    const std::string shown = "> " + prompt;
    const std::size_t last_row = shown.size() - shown.size() % 120;
    QVERIFY(child.expect("\x1b[200~" + prompt + "\x1b[201~\r",
                         shown.substr(last_row - 120, 120) + "\r\n" + shown.substr(last_row) + "\r\n"));
    // While the prompt is read, a status line on stderr (a terminal here) says how far.
    QVERIFY2(child.expect("", "Reading the prompt: ", 15000), child.since().c_str());
    QVERIFY2(child.expect("", " tokens (", 15000), child.since().c_str());
    QTest::qWait(1000);
    const auto start = std::chrono::steady_clock::now();
    QVERIFY2(child.expect("\x03", "cancelled", 15000), child.since().c_str());
    // The line is cleared before the reply's end is shown.
    const std::size_t last_status = child.output.rfind("Reading the prompt: ");
    const std::size_t cleared = child.output.find("\r\x1b[K", last_status);
    QVERIFY2(cleared != std::string::npos && cleared < child.output.find("cancelled", last_status),
             child.output.substr(last_status).c_str());
    QVERIFY(child.expect("", "reply stopped"));
    QVERIFY(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
    QVERIFY(child.expect("", "> "));
    QVERIFY(child.pump("\x03", "", 0, 200));
    const int status = child.wait_exit();
    QVERIFY2(WIFEXITED(status) && WEXITSTATUS(status) == 0, child.output.c_str());
    struct termios t;
    QVERIFY(tcgetattr(child.slave, &t) == 0);
    QVERIFY((t.c_lflag & ICANON) != 0);
    const QStringList user = user_messages(db);
    QCOMPARE(user.size(), 1);
    QCOMPARE(user[0].toStdString(), prompt);
  }

  // Control characters in a reply (here from a server that sends some) are shown as symbols on
  // a terminal and passed through unchanged when stdout is not one.
  void controlCharactersInRepliesAreShownOnATerminal() {
    httplib::Server server;
    const std::string reply =
        "A\x1b[2JB\x07"
        "C\xc2\x9b"
        "D";
    server.Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"object":"list","data":[{"id":"fake","object":"model"}]})", "application/json");
    });
    server.Post("/v1/chat/completions", [&](const httplib::Request&, httplib::Response& res) {
      const nlohmann::json body = {
          {"choices",
           {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", reply}}}, {"finish_reason", "stop"}}}},
          {"usage", {{"prompt_tokens", 3}, {"completion_tokens", 4}, {"total_tokens", 7}}}};
      res.set_content(body.dump(), "application/json");
    });
    const int port = server.bind_to_any_port("127.0.0.1");
    QVERIFY(port > 0);
    std::thread serving([&] { server.listen_after_bind(); });
    const QString url = "http://127.0.0.1:" + QString::number(port) + "/v1";

    {
      PtyChild child;
      QVERIFY(child.start({"chat", "--remote", url, "--no-history"}));
      QVERIFY2(child.expect("", "> "), child.output.c_str());
      QVERIFY2(child.expect("hi\r", " tokens, "), child.output.c_str());
      QVERIFY2(child.output.find("A\xe2\x90\x9b[2JB\xe2\x90\x87"
                                 "C\\u009bD") != std::string::npos,
               child.output.c_str());
      QVERIFY(child.output.find("\x1b[2J") == std::string::npos);
      QVERIFY(child.output.find('\x07') == std::string::npos);
      child.expect("/quit\r", "", 200);
      QVERIFY(child.wait_exit() == 0);
    }
    QProcess piped;
    piped.setProcessEnvironment(quiet_env());
    piped.start(kCli, {"chat", "--remote", url, "--no-history"});
    QVERIFY(piped.waitForStarted());
    piped.write("hi\n");
    piped.closeWriteChannel();
    QVERIFY(piped.waitForFinished(30000));
    QCOMPARE(piped.exitCode(), 0);
    QVERIFY(piped.readAllStandardOutput().contains(QByteArray::fromStdString(reply)));
    server.stop();
    serving.join();
  }

  // Ctrl+C also stops a reply from a server that is still thinking (no byte yet): the request is
  // hung up at once.
  void ctrlCStopsAWaitingRemoteReply() {
    httplib::Server server;
    std::atomic<bool> release{false};
    server.Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"object":"list","data":[{"id":"slow","object":"model"}]})", "application/json");
    });
    server.Post("/v1/chat/completions", [&](const httplib::Request&, httplib::Response& res) {
      for (int i = 0; i < 600 && !release; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      res.set_content(
          R"({"choices":[{"index":0,"message":{"role":"assistant","content":"late"},"finish_reason":"stop"}]})",
          "application/json");
    });
    const int port = server.bind_to_any_port("127.0.0.1");
    QVERIFY(port > 0);
    std::thread serving([&] { server.listen_after_bind(); });
    const QString url = "http://127.0.0.1:" + QString::number(port) + "/v1";
    {
      PtyChild child;
      QVERIFY(child.start({"chat", "--remote", url, "--no-history"}));
      QVERIFY2(child.expect("", "> "), child.output.c_str());
      QVERIFY(child.expect("hi\r", "hi\r\n"));
      QTest::qWait(500);
      const auto start = std::chrono::steady_clock::now();
      QVERIFY2(child.expect("\x03", "reply stopped", 10000), child.since().c_str());
      QVERIFY(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
      QVERIFY(child.output.find("late") == std::string::npos);
      QVERIFY(child.expect("", "> "));
      child.expect("\x03", "", 200);
      QVERIFY(child.wait_exit() == 0);
    }
    release = true;
    server.stop();
    serving.join();
  }

  // What is pasted while a reply is still coming is neither echoed into it nor cut into lines:
  // the next prompt sends it as one message.
  void pasteDuringAReplyIsOneMessageAfterIt() {
    httplib::Server server;
    std::atomic<bool> release{false};
    std::mutex mutex;
    std::vector<std::string> received;  // the last user message of each request
    server.Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"object":"list","data":[{"id":"slow","object":"model"}]})", "application/json");
    });
    server.Post("/v1/chat/completions", [&](const httplib::Request& req, httplib::Response& res) {
      const auto body = nlohmann::json::parse(req.body, nullptr, false);
      std::string text;
      if (!body.is_discarded()) {
        const auto& content = body["messages"].back()["content"];
        if (content.is_string()) {
          text = content.get<std::string>();
        } else if (content.is_array()) {
          for (const auto& part : content) text += part.value("text", "");
        }
      }
      bool first = false;
      {
        std::lock_guard lock(mutex);
        received.push_back(text);
        first = received.size() == 1;
      }
      for (int i = 0; first && i < 600 && !release; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      res.set_content(
          R"({"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]})",
          "application/json");
    });
    const int port = server.bind_to_any_port("127.0.0.1");
    QVERIFY(port > 0);
    std::thread serving([&] { server.listen_after_bind(); });
    const QString url = "http://127.0.0.1:" + QString::number(port) + "/v1";
    {
      PtyChild child;
      QVERIFY(child.start({"chat", "--remote", url, "--no-history"}));
      QVERIFY2(child.expect("", "> "), child.output.c_str());
      QVERIFY(child.expect("first\r", "first\r\n"));
      QTest::qWait(300);
      // While the reply is awaited: no echo, no lines, but Ctrl+C is a signal.
      struct termios t;
      QVERIFY(tcgetattr(child.slave, &t) == 0);
      QVERIFY((t.c_lflag & ICANON) == 0);
      QVERIFY((t.c_lflag & ECHO) == 0);
      QVERIFY((t.c_lflag & ISIG) != 0);
      child.pump("\x1b[200~second\r\nline\x1b[201~\r", "", 0, 300);
      release = true;
      QVERIFY2(child.expect("", " tokens, "), child.since().c_str());
      QVERIFY2(child.expect("", " tokens, "), child.since().c_str());
      child.expect("/quit\r", "", 200);
      QVERIFY(child.wait_exit() == 0);
    }
    server.stop();
    serving.join();
    std::string all;
    for (const auto& r : received) all += "[" + r + "]";
    QVERIFY2(received == (std::vector<std::string>{"first", "second\nline"}), all.c_str());
  }

  void sigtermRestoresTheTerminal() {
    QTemporaryDir tmp;
    const QString demo = tmp.filePath("demo");
    QCOMPARE(run_program(kCli, {"make-demo-model", demo}, quiet_env()).exit_code, 0);
    PtyChild child;
    QVERIFY(child.start({"chat", "--model", demo, "--no-history"}));
    QVERIFY2(child.expect("", "> "), child.output.c_str());
    struct termios t;
    QVERIFY(tcgetattr(child.slave, &t) == 0);
    QVERIFY((t.c_lflag & ICANON) == 0);
    kill(child.pid, SIGTERM);
    const int status = child.wait_exit();
    QVERIFY(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
    QVERIFY(tcgetattr(child.slave, &t) == 0);
    QVERIFY((t.c_lflag & ICANON) != 0);
    QVERIFY((t.c_lflag & ECHO) != 0);
  }
};

QTEST_GUILESS_MAIN(TestCliTerminal)
#include "test_cli_terminal.moc"
