// The dependency rule of docs/ARCHITECTURE.md, checked on the sources: kernels/ and engine/
// include no Qt, engine/ and storage/ never include each other, storage/ uses no Qt GUI,
// kernels/ include nothing of the engine, knowledge/ includes no Qt, no engine and no storage,
// app/hub includes no Qt, no storage and only the engine's public headers, and common/ (shared
// by engine/ and storage/) includes none of them.
#include <QtTest>
#include <filesystem>
#include <fstream>
#include <regex>

namespace fs = std::filesystem;

namespace {

struct Violation {
  std::string file;
  std::string include;
};

std::vector<Violation> find_includes(const std::string& folder, const std::regex& forbidden) {
  std::vector<Violation> found;
  const fs::path root = fs::path(DAY0_SOURCE_DIR) / folder;
  const std::regex include_line("^\\s*#\\s*include\\s*[<\"]([^>\"]+)[>\"]");
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const auto ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp" && ext != ".cu" && ext != ".cuh" && ext != ".in"))
      continue;
    std::ifstream in(entry.path());
    std::smatch m;
    for (std::string line; std::getline(in, line);) {
      if (std::regex_search(line, m, include_line) && std::regex_search(m[1].str(), forbidden))
        found.push_back({fs::relative(entry.path(), DAY0_SOURCE_DIR).string(), m[1].str()});
    }
  }
  return found;
}

QString describe(const std::vector<Violation>& v) {
  QString out;
  for (const auto& x : v) out += QString::fromStdString(x.file + " includes " + x.include + "\n");
  return out;
}

const std::regex kQt("^Q[A-Za-z]|^Qt[A-Z]|/Q[A-Z]");

}  // namespace

class TestLayering : public QObject {
  Q_OBJECT
 private slots:
  void engineHasNoQt() {
    const auto v = find_includes("engine", kQt);
    QVERIFY2(v.empty(), qPrintable(describe(v)));
  }
  void kernelsHaveNoQtAndNoEngine() {
    auto v = find_includes("kernels", kQt);
    const auto e = find_includes("kernels", std::regex("^day0/|^(core|io|formats|models|backend|runtime)/"));
    v.insert(v.end(), e.begin(), e.end());
    QVERIFY2(v.empty(), qPrintable(describe(v)));
  }
  void engineDoesNotIncludeStorage() {
    const auto v = find_includes("engine", std::regex("^storage/|sqlite3"));
    QVERIFY2(v.empty(), qPrintable(describe(v)));
  }
  void storageDoesNotIncludeEngineOrQtGui() {
    auto v = find_includes("storage", std::regex("^day0/|^engine/|^(core|io|formats|models|backend)/"));
    const auto gui = find_includes("storage", std::regex("QtGui|QtQuick|QtQml|QtWidgets|QGuiApplication"));
    v.insert(v.end(), gui.begin(), gui.end());
    QVERIFY2(v.empty(), qPrintable(describe(v)));
  }
  void knowledgeHasNoQtEngineOrStorage() {
    auto v = find_includes("knowledge", kQt);
    const auto e = find_includes(
        "knowledge", std::regex("^day0/|^engine/|^storage/|^app/|^(core|io|formats|models|backend|runtime)/"));
    v.insert(v.end(), e.begin(), e.end());
    QVERIFY2(v.empty(), qPrintable(describe(v)));
  }
  void hubHasNoQtAndNoStorage() {
    // app/hub is shared by day0-cli and the app: no Qt, and only the engine's public API.
    auto v = find_includes("app/hub", kQt);
    const auto e = find_includes("app/hub", std::regex("^storage/|^(core|io|formats|models|backend|runtime|limits)/"));
    v.insert(v.end(), e.begin(), e.end());
    QVERIFY2(v.empty(), qPrintable(describe(v)));
  }
  void commonIncludesNoneOfTheLayers() {
    auto v = find_includes("common", kQt);
    const auto e = find_includes(
        "common", std::regex("^day0/|^engine/|^storage/|^knowledge/|^app/|^(core|io|formats|models|backend|runtime)/"));
    v.insert(v.end(), e.begin(), e.end());
    QVERIFY2(v.empty(), qPrintable(describe(v)));
  }
  void theCheckCanFail() {
    // The scanner itself finds includes that exist, so an empty result above means something.
    QVERIFY(!find_includes("app", kQt).empty());
    QVERIFY(!find_includes("engine", std::regex("^day0/status\\.h$")).empty());
  }
};

QTEST_APPLESS_MAIN(TestLayering)
#include "test_layering.moc"
