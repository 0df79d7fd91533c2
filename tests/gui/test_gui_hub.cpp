// Get a model in the app, against a local server that speaks the Hugging Face Hub's endpoints:
// the controller plans, downloads (progress to 100%, a dropped connection resumed, a corrupt file
// rejected), pauses, resumes, cancels and opens the folder; gated repositories with the token from
// Settings; the plan of the GLM-5.3-Flash shape; and the real window offscreen, from the welcome
// card's known models to the Open button.
#include <sys/stat.h>

#include <QtQml/qqmlextensionplugin.h>
#include <QQmlApplicationEngine>
#include <QQuickItem>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>

#include "gui/app_controller.h"
#include "gui/hub_controller.h"
#include "gui/model_manager.h"
#include "hub/fake_hub.h"
#include "hub/shape_repo.h"

Q_IMPORT_QML_PLUGIN(Day0_UiPlugin)

using namespace day0::app;
using day0::test::FakeHub;
using day0::test::FakeRepo;
namespace fs = std::filesystem;

namespace {
const fs::path kDemo = fs::path(DAY0_SOURCE_DIR) / "tests/data/models/demo-random";
constexpr const char* kShard2 = "model-00002-of-00002.safetensors";
constexpr int kWaitMs = 30000;

QString describe(HubController* hub) { return hub->state() + ": " + hub->error(); }

// Waits until the controller is in `state`, failing the test (with its error) otherwise.
#define WAIT_FOR_STATE(expected) \
  QTRY_VERIFY2_WITH_TIMEOUT(hub()->state() == QLatin1String(expected), qPrintable(describe(hub())), kWaitMs)

}  // namespace

class TestGuiHub : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::unique_ptr<FakeHub> server_;
  std::unique_ptr<AppController> app_;

  HubController* hub() const { return app_->hub(); }
  QString folder(const QString& name) const { return tmp_.filePath("models/" + name); }

  // Plans `repo` into `dir` and starts its download.
  void planAndStart(const QString& repo, const QString& dir) {
    hub()->planPull(repo, dir);
    WAIT_FOR_STATE("planned");
    hub()->startDownload();
  }

 private slots:
  void initTestCase() {
    server_ = std::make_unique<FakeHub>();
    FakeRepo demo = FakeHub::repo_from_folder("day0/demo", kDemo);
    demo.files.push_back({"original/model.safetensors", "x", true, "", 0});
    server_->add_repo(demo);
    qputenv("HF_ENDPOINT", QByteArray::fromStdString(server_->endpoint()));
    qputenv("XDG_CONFIG_HOME", tmp_.filePath("config").toUtf8());
    qputenv("XDG_DATA_HOME", tmp_.filePath("xdg-data").toUtf8());
    qputenv("HF_HOME", tmp_.filePath("hf").toUtf8());
    qunsetenv("HF_TOKEN");
    qunsetenv("HF_HUB_OFFLINE");
    app_ = std::make_unique<AppController>(AppPaths{tmp_.filePath("data"), tmp_.filePath("day0.ini")});
  }

  void curatedListHasSizes() {
    const QVariantList curated = hub()->curated();
    QCOMPARE(curated.size(), 3);
    for (const QVariant& v : curated) {
      const QVariantMap m = v.toMap();
      QVERIFY(m["sizeText"].toString().contains("GB"));
      QVERIFY(!m["repo"].toString().isEmpty());
    }
    QVERIFY(hub()->defaultFolder("openai/gpt-oss-20b").endsWith("/xdg-data/day0/models/openai/gpt-oss-20b"));
  }

  void downloadsAndOpens() {
    const QString dir = folder("demo");
    hub()->planPull("day0/demo", dir);
    QCOMPARE(hub()->state(), QString("planning"));
    WAIT_FOR_STATE("planned");
    const QVariantMap plan = hub()->plan();
    QCOMPARE(plan["fileCount"].toInt(), 9);
    QCOMPARE(plan["skippedCount"].toInt(), 2);
    QVERIFY(plan["supported"].toBool());
    QVERIFY(plan["diskOk"].toBool());
    QVERIFY(plan["architecture"].toString().startsWith("gpt_oss"));
    QVERIFY(plan["paramsText"].toString().contains("active per token"));
    QVERIFY(!plan["fitText"].toString().isEmpty());
    QCOMPARE(hub()->files().size(), 9);
    QCOMPARE(hub()->targetDir(), dir);

    QSignalSpy progress(hub(), &HubController::progressChanged);
    QSignalSpy finished(hub(), &HubController::downloadFinished);
    hub()->startDownload();
    WAIT_FOR_STATE("done");
    QCOMPARE(finished.size(), 1);
    QCOMPARE(finished[0][0].toBool(), true);
    QVERIFY(progress.size() >= 1);
    QCOMPARE(hub()->progress(), 1.0);
    for (const QVariant& f : hub()->files()) QCOMPARE(f.toMap()["state"].toString(), QString("done"));
    QVERIFY(hub()->progressText().contains("9 of 9 files"));

    QSignalSpy ready(app_->models(), &ModelManager::modelReady);
    hub()->openModel();
    QVERIFY(ready.wait(kWaitMs));
    QCOMPARE(app_->models()->loadedDir(), dir);
  }

  void resumesAfterADrop() {
    server_->drop(kShard2, 60000, 1);
    const auto before = server_->ranges_of(kShard2).size();
    planAndStart("day0/demo", folder("dropped"));
    WAIT_FOR_STATE("done");
    const auto ranges = server_->ranges_of(kShard2);
    QCOMPARE(ranges.size(), before + 2);
    QCOMPARE(ranges.back(), std::string("bytes=60000-"));
  }

  void rejectsACorruptFile() {
    FakeRepo repo = FakeHub::repo_from_folder("day0/corrupt", kDemo);
    FakeHub::corrupt(repo, kShard2, 5000);
    server_->add_repo(repo);
    const QString dir = folder("corrupt");
    planAndStart("day0/corrupt", dir);
    WAIT_FOR_STATE("failed");
    QVERIFY(hub()->error().contains("SHA-256 mismatch"));
    QVERIFY(hub()->error().contains("the good ones are kept"));
    int failed = 0;
    for (const QVariant& f : hub()->files()) failed += f.toMap()["state"].toString() == "failed" ? 1 : 0;
    QCOMPARE(failed, 1);
    QVERIFY(QFile::exists(dir + "/model-00001-of-00002.safetensors"));
    QVERIFY(!QFile::exists(dir + "/" + kShard2));
  }

  void pauseResumeCancel() {
    server_->throttle(50000);
    const QString dir = folder("paused");
    hub()->planPull("day0/demo", dir);
    WAIT_FOR_STATE("planned");
    hub()->startDownload();
    QTRY_VERIFY_WITH_TIMEOUT(hub()->progress() > 0.05, kWaitMs);
    hub()->pause();
    QCOMPARE(hub()->state(), QString("paused"));
    QTRY_VERIFY_WITH_TIMEOUT(hub()->progressText().contains("paused"), kWaitMs);
    QTest::qWait(300);  // the pieces in flight when Pause came are written
    const double at = hub()->progress();
    QTest::qWait(400);
    QCOMPARE(hub()->progress(), at);
    hub()->resume();
    QCOMPARE(hub()->state(), QString("downloading"));
    QTRY_VERIFY_WITH_TIMEOUT(hub()->progress() > at, kWaitMs);
    hub()->cancel();
    WAIT_FOR_STATE("cancelled");
    QVERIFY(hub()->error().contains("partial files are kept"));
    server_->throttle(0);
    hub()->startDownload();  // resumes from the .part files
    WAIT_FOR_STATE("done");
    QCOMPARE(hub()->progress(), 1.0);
  }

  void gatedRepositoryWithTheSettingsToken() {
    FakeRepo repo = FakeHub::repo_from_folder("day0/gated", kDemo);
    repo.gated = true;
    server_->add_repo(repo);
    QVERIFY(!hub()->hasToken());
    hub()->planPull("day0/gated", folder("gated"));
    WAIT_FOR_STATE("failed");
    QVERIFY2(hub()->error().contains("needs a Hugging Face token"), qPrintable(hub()->error()));
    QSignalSpy token(hub(), &HubController::tokenChanged);
    QVERIFY(hub()->saveToken(FakeHub::kToken));
    QCOMPARE(token.size(), 1);
    QVERIFY(hub()->hasToken());
    struct stat st {};
    QCOMPARE(::stat(tmp_.filePath("config/day0/hf-token").toLocal8Bit().constData(), &st), 0);
    QCOMPARE(st.st_mode & 0777, 0600u);
    planAndStart("day0/gated", folder("gated"));
    WAIT_FOR_STATE("done");
    QVERIFY(!server_->cdn_saw_token());
    QVERIFY(hub()->saveToken(""));
    QVERIFY(!hub()->hasToken());
  }

  void badInput() {
    hub()->planPull("not a repository", "");
    QCOMPARE(hub()->state(), QString("failed"));
    QVERIFY(hub()->error().contains("owner/name"));
    FakeRepo traversal;
    traversal.id = "bad/traversal";
    traversal.raw_listing = R"({"siblings": [{"rfilename": "../../evil", "size": 1}]})";
    server_->add_repo(traversal);
    hub()->planPull("bad/traversal", folder("evil"));
    WAIT_FOR_STATE("failed");
    QVERIFY(hub()->error().contains("would leave the download folder"));
    hub()->startDownload();  // no plan: nothing happens
    QCOMPARE(hub()->state(), QString("failed"));
  }

  void planOfTheGlmShape() {
    server_->add_repo(day0::test::shape_repo(
        "zai-org/GLM-5.3-Flash", fs::path(DAY0_TEST_DATA_DIR) / "configs/glm-5.3-flash-shape.config.json", 40));
    hub()->planPull("zai-org/GLM-5.3-Flash", folder("glm"));
    WAIT_FOR_STATE("planned");
    const QVariantMap plan = hub()->plan();
    QVERIFY(plan["architecture"].toString().startsWith("glm5_next"));
    QCOMPARE(plan["family"].toString(), QString("GLM-5.3-Flash (glm5_next)"));
    QVERIFY(plan["supported"].toBool());
    QVERIFY(plan["paramsText"].toString().contains(QRegularExpression(R"(^3\d\d\.\d B total)")));
    QVERIFY(plan["expertsText"].toString().startsWith("288 routed, top-8"));
    QCOMPARE(plan["fileCount"].toInt(), 42);
    QVERIFY(!plan["fitText"].toString().isEmpty());
    QVERIFY(hub()->planText().contains("Parameters"));
    if (!plan["diskOk"].toBool()) {
      QVERIFY(hub()->error().contains("not enough disk space"));
      hub()->startDownload();  // refused before any byte moves
      QCOMPARE(hub()->state(), QString("planned"));
    }
    QCOMPARE(server_->ranges_of("model-00001-of-00040.safetensors").size(), std::size_t{0});
  }

  // The window: the welcome card's known models open Get a model, which checks the repository;
  // Download and Open are the page's buttons.
  void thePageInTheWindow() {
    app_->models()->unload();
    QQuickStyle::setStyle("Fusion");
    QQmlApplicationEngine engine;
    engine.setInitialProperties({{"controller", QVariant::fromValue(app_.get())}});
    engine.addImportPath("qrc:/qt/qml");
    engine.load(QUrl("qrc:/qt/qml/Day0/Ui/Main.qml"));
    QVERIFY(!engine.rootObjects().isEmpty());
    auto* window = qobject_cast<QQuickWindow*>(engine.rootObjects().constFirst());
    QVERIFY(window);
    QTRY_VERIFY(window->findChild<QQuickItem*>("welcomeGetModel") != nullptr);
    QTRY_VERIFY(window->findChild<QQuickItem*>("welcomeGetModel")->isVisible());
    QMetaObject::invokeMethod(window, "getModel", Q_ARG(QVariant, QVariant(QString("day0/demo"))));
    WAIT_FOR_STATE("planned");
    auto* repoField = window->findChild<QQuickItem*>("hubRepoField");
    QVERIFY(repoField);
    QCOMPARE(repoField->property("text").toString(), QString("day0/demo"));
    auto* download = window->findChild<QQuickItem*>("hubDownloadButton");
    QVERIFY(download);
    QTRY_VERIFY(download->isVisible() && download->isEnabled());
    QMetaObject::invokeMethod(download, "clicked");
    WAIT_FOR_STATE("done");
    auto* progress = window->findChild<QQuickItem*>("hubProgress");
    QVERIFY(progress);
    QTRY_COMPARE(progress->property("value").toDouble(), 1.0);
    auto* open = window->findChild<QQuickItem*>("hubOpenButton");
    QVERIFY(open);
    QTRY_VERIFY(open->isVisible());
    QSignalSpy ready(app_->models(), &ModelManager::modelReady);
    QMetaObject::invokeMethod(open, "clicked");
    QVERIFY(ready.wait(kWaitMs));
    QCOMPARE(app_->models()->loadedDir(), hub()->targetDir());
  }

  void cleanupTestCase() {
    app_.reset();
    server_.reset();
  }
};

QTEST_MAIN(TestGuiHub)
#include "test_gui_hub.moc"
