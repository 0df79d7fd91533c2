#pragma once
// Runs one of Day0's executables and captures what it printed.
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

namespace day0::test {

struct ProcessOutput {
  int exit_code = -1;
  bool crashed = false;
  QString out;
  QString err;
};

// The environment for running Day0's programs in tests: no log file in the user's folders.
inline QProcessEnvironment quiet_env() {
  auto env = QProcessEnvironment::systemEnvironment();
  env.insert("DAY0_LOG_TO_FILE", "0");
  return env;
}

inline ProcessOutput run_program(const QString& program, const QStringList& args,
                                 const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment(),
                                 int timeout_ms = 120000) {
  QProcess p;
  p.setProcessEnvironment(env);
  p.start(program, args);
  ProcessOutput r;
  if (!p.waitForStarted(10000)) {
    r.err = "cannot start " + program;
    return r;
  }
  if (!p.waitForFinished(timeout_ms)) {
    p.kill();
    p.waitForFinished();
    r.err = "timed out";
    return r;
  }
  r.crashed = p.exitStatus() == QProcess::CrashExit;
  r.exit_code = p.exitCode();
  r.out = QString::fromUtf8(p.readAllStandardOutput());
  r.err = QString::fromUtf8(p.readAllStandardError());
  return r;
}

}  // namespace day0::test
