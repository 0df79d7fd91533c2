// day0-cli pull as a person runs it, against a local server that speaks the Hub's endpoints: the
// plan, then the files; a dropped connection resumed by the next run; a corrupt file rejected with
// the good ones kept; gated repositories with and without HF_TOKEN; offline mode; the plan of the
// GLM-5.3-Flash shape; then the pulled folder generates on the CPU.
#include <signal.h>
#include <sys/stat.h>

#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>

#include "app/process_runner.h"
#include "hub/fake_hub.h"
#include "hub/shape_repo.h"

using day0::test::FakeHub;
using day0::test::FakeRepo;
using day0::test::ProcessOutput;
using day0::test::run_program;
namespace fs = std::filesystem;

namespace {

const QString kCli = QStringLiteral(DAY0_BIN_DIR "/day0-cli");
const fs::path kDemo = fs::path(DAY0_SOURCE_DIR) / "tests/data/models/demo-random";
constexpr const char* kShard2 = "model-00002-of-00002.safetensors";

}  // namespace

class TestHubCli : public QObject {
  Q_OBJECT
  std::unique_ptr<FakeHub> hub_;
  QTemporaryDir home_;

  // day0-cli with the Hub at the fake server and every user folder inside the test's own.
  QProcessEnvironment env(const QString& token = {}) const {
    auto e = day0::test::quiet_env();
    e.insert("HF_ENDPOINT", QString::fromStdString(hub_->endpoint()));
    e.insert("HOME", home_.path());
    e.insert("XDG_CONFIG_HOME", home_.path() + "/config");
    e.insert("XDG_DATA_HOME", home_.path() + "/data");
    e.insert("HF_HOME", home_.path() + "/hf");
    e.remove("HF_TOKEN");
    e.remove("HF_HUB_OFFLINE");
    if (!token.isEmpty()) e.insert("HF_TOKEN", token);
    return e;
  }
  ProcessOutput pull(const QStringList& args, const QProcessEnvironment& e) const {
    return run_program(kCli, QStringList{"pull"} + args, e);
  }

 private slots:
  void initTestCase() {
    hub_ = std::make_unique<FakeHub>();
    FakeRepo demo = FakeHub::repo_from_folder("day0/demo", kDemo);
    demo.files.push_back({"original/model.safetensors", "x", true, "", 0});
    hub_->add_repo(demo);
  }

  void pullsAFolderThatChats() {
    const QString dir = home_.path() + "/pulled";
    const auto r = pull({"day0/demo", "--dir", dir}, env());
    QVERIFY2(r.exit_code == 0, qPrintable(r.err + r.out));
    // The plan first, then the download.
    QVERIFY2(
        r.out.contains(QRegularExpression(R"(Architecture\s+gpt_oss \(GptOssForCausalLM\): gpt-oss, Day0 runs it)")),
        qPrintable(r.out));
    QVERIFY(r.out.contains(QRegularExpression(R"(Parameters\s+\S+ \S+ total, \S+ \S+ active per token)")));
    QVERIFY(r.out.contains(QRegularExpression(R"(Download\s+\S+ kB in 9 files \(2 other files left out\))")));
    QVERIFY(r.out.contains(QRegularExpression(R"(Fits\s+\S)")));
    QVERIFY(r.out.contains("Downloaded day0/demo to " + dir));
    QVERIFY(r.err.contains("100%"));
    QVERIFY(!QFile::exists(dir + "/original"));
    QVERIFY(!QFile::exists(dir + "/day0-demo.json"));

    // The folder loads and generates a few tokens on the CPU.
    const auto g =
        run_program(kCli, {"generate", "--model", dir, "--tokens", "1,2,3", "--max-new-tokens", "4", "--ids"},
                    day0::test::quiet_env());
    QVERIFY2(g.exit_code == 0, qPrintable(g.err));
    QVERIFY2(QRegularExpression(R"(^\d+(,\d+)*$)").match(g.out.trimmed().split('\n').last()).hasMatch(),
             qPrintable(g.out));

    // Again: everything is there already.
    const auto again = pull({"day0/demo", "--dir", dir}, env());
    QCOMPARE(again.exit_code, 0);
    QVERIFY2(again.out.contains("0 B fetched now, 9 already there"), qPrintable(again.out));
  }

  void resumesWhereTheDroppedConnectionLeftOff() {
    const QString dir = home_.path() + "/resumed";
    hub_->drop(kShard2, 50000, 100);
    const auto failed = pull({"day0/demo", "--dir", dir, "--retries", "0"}, env());
    QCOMPARE(failed.exit_code, 1);
    QVERIFY2(failed.err.contains(QString(kShard2) + ": ") && failed.err.contains("connection"), qPrintable(failed.err));
    QVERIFY(failed.err.contains("the 8 good ones are kept"));
    QCOMPARE(QFileInfo(dir + "/" + kShard2 + ".part").size(), qint64{50000});
    hub_->drop(kShard2, 0, 0);
    const auto resumed = pull({"day0/demo", "--dir", dir}, env());
    QVERIFY2(resumed.exit_code == 0, qPrintable(resumed.err));
    QCOMPARE(hub_->ranges_of(kShard2).back(), std::string("bytes=50000-"));
    QVERIFY(resumed.out.contains("8 already there"));
    QVERIFY(!QFile::exists(dir + "/" + kShard2 + ".part"));
  }

  void ctrlCStopsAndTheSameCommandResumes() {
    hub_->throttle(30000);
    const QString dir = home_.path() + "/interrupted";
    const QString part = dir + "/model-00001-of-00002.safetensors.part";
    QProcess p;
    p.setProcessEnvironment(env());
    p.start(kCli, {"pull", "day0/demo", "--dir", dir});
    QVERIFY(p.waitForStarted());
    QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(part).size() > 0, 30000);
    ::kill(static_cast<pid_t>(p.processId()), SIGINT);
    QVERIFY(p.waitForFinished(30000));
    hub_->throttle(0);
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QCOMPARE(p.exitCode(), 1);
    QVERIFY2(err.contains("stopped. The .part files are kept in " + dir), qPrintable(err));
    const qint64 kept = QFileInfo(part).size();
    QVERIFY(kept > 0);
    const auto resumed = pull({"day0/demo", "--dir", dir}, env());
    QVERIFY2(resumed.exit_code == 0, qPrintable(resumed.err));
    QCOMPARE(hub_->ranges_of("model-00001-of-00002.safetensors").back(), "bytes=" + std::to_string(kept) + "-");
  }

  void rejectsACorruptFile() {
    FakeRepo repo = FakeHub::repo_from_folder("day0/corrupt", kDemo);
    FakeHub::corrupt(repo, kShard2, 5000);
    hub_->add_repo(repo);
    const QString dir = home_.path() + "/corrupt";
    const auto r = pull({"day0/corrupt", "--dir", dir}, env());
    QVERIFY2(r.exit_code == 1, qPrintable(r.out + r.err));
    QVERIFY2(r.err.contains(QString(kShard2) + ": SHA-256 mismatch"), qPrintable(r.err));
    QVERIFY(r.err.contains("1 of 9 files failed; the 8 good ones are kept"));
    QVERIFY(!QFile::exists(dir + "/" + kShard2));
    QVERIFY(QFile::exists(dir + "/model-00001-of-00002.safetensors"));
  }

  void gatedRepositoriesNeedTheToken() {
    FakeRepo repo = FakeHub::repo_from_folder("day0/gated", kDemo);
    repo.gated = true;
    hub_->add_repo(repo);
    const QString dir = home_.path() + "/gated";
    const auto refused = pull({"day0/gated", "--dir", dir}, env());
    QCOMPARE(refused.exit_code, 1);
    QVERIFY2(refused.err.contains("needs a Hugging Face token (HTTP 401"), qPrintable(refused.err));
    QVERIFY(refused.err.contains("HF_TOKEN"));
    QVERIFY(!QFile::exists(dir));
    const auto ok = pull({"day0/gated", "--dir", dir}, env(FakeHub::kToken));
    QVERIFY2(ok.exit_code == 0, qPrintable(ok.err));
    // The saved token works as well, and its file is the owner's only.
    QProcess save;
    save.setProcessEnvironment(env());
    save.start(kCli, {"pull", "--save-token"});
    save.write(QByteArray(FakeHub::kToken) + "\n");
    save.closeWriteChannel();
    QVERIFY(save.waitForFinished(20000));
    QCOMPARE(save.exitCode(), 0);
    struct stat st {};
    QCOMPARE(::stat(QFile::encodeName(home_.path() + "/config/day0/hf-token").constData(), &st), 0);
    QCOMPARE(st.st_mode & 0777, 0600u);
    const auto saved = pull({"day0/gated", "--dir", home_.path() + "/gated2"}, env());
    QVERIFY2(saved.exit_code == 0, qPrintable(saved.err));
    QVERIFY(!hub_->cdn_saw_token());
  }

  void offlineModeRefuses() {
    auto e = env();
    e.insert("HF_HUB_OFFLINE", "1");
    const int before = hub_->listing_requests();
    const auto r = pull({"day0/demo", "--dir", home_.path() + "/offline"}, e);
    QCOMPARE(r.exit_code, 1);
    QVERIFY(r.err.contains("offline mode (HF_HUB_OFFLINE) is on"));
    QCOMPARE(hub_->listing_requests(), before);
  }

  void badInputGivesAMessage() {
    FakeRepo traversal;
    traversal.id = "bad/traversal";
    traversal.raw_listing = R"({"siblings": [{"rfilename": "../../.bashrc", "size": 10}]})";
    hub_->add_repo(traversal);
    FakeRepo malformed;
    malformed.id = "bad/json";
    malformed.raw_listing = "{\"siblings\": [";
    hub_->add_repo(malformed);
    for (const auto& [args, expected, code] :
         {std::tuple{QStringList{"bad/traversal"}, QString("would leave the download folder"), 1},
          std::tuple{QStringList{"bad/json"}, QString("did not answer with a file list"), 1},
          std::tuple{QStringList{"nobody/nothing"}, QString("was not found (HTTP 404"), 1},
          std::tuple{QStringList{"not a repo"}, QString("is not a Hugging Face repository"), 2},
          std::tuple{QStringList{"day0/demo", "--parallel", "0"}, QString("--parallel must be an integer"), 2},
          std::tuple{QStringList{}, QString("usage: day0-cli pull"), 2}}) {
      const auto r = pull(args, env());
      QVERIFY2(!r.crashed, qPrintable(args.join(' ')));
      QCOMPARE(r.exit_code, code);
      QVERIFY2(r.err.contains(expected), qPrintable(r.err));
    }
    QVERIFY(!QFile::exists(home_.path() + "/.bashrc"));
    auto e = env();
    e.insert("HF_ENDPOINT", "gopher://x");
    QCOMPARE(pull({"day0/demo"}, e).exit_code, 2);
  }

  void planOfTheGlmShapeAndTheDiskCheck() {
    const fs::path config = fs::path(DAY0_TEST_DATA_DIR) / "configs/glm-5.3-flash-shape.config.json";
    hub_->add_repo(day0::test::shape_repo("zai-org/GLM-5.3-Flash", config, 40));
    const QString dir = home_.path() + "/glm";
    const auto plan = pull({"zai-org/GLM-5.3-Flash", "--dir", dir, "--plan-only"}, env());
    QVERIFY2(plan.exit_code == 0 || plan.err.contains("not enough disk space"), qPrintable(plan.err));
    QVERIFY2(
        plan.out.contains(QRegularExpression(R"(Architecture\s+glm5_next: GLM-5.3-Flash \(glm5_next\), Day0 runs it)")),
        qPrintable(plan.out));
    QVERIFY(plan.out.contains(QRegularExpression(R"(Parameters\s+3\d\d\.\d B total, \d+\.\d B active per token)")));
    QVERIFY(plan.out.contains(QRegularExpression(R"(Experts\s+288 routed x 42 MoE layers, top-8, BF16)")));
    QVERIFY(plan.out.contains(QRegularExpression(R"(Vision\s+yes)")));
    QVERIFY(plan.out.contains(QRegularExpression(R"(Download\s+6\d\d GB in 42 files)")));
    QVERIFY(plan.out.contains(QRegularExpression(R"(Fits\s+(resident|does not fit))")));
    QVERIFY(!QFile::exists(dir));
    // Without --plan-only it stops before any large byte moves when the disk lacks room.
    const auto refused = pull({"zai-org/GLM-5.3-Flash", "--dir", dir}, env());
    if (refused.err.contains("not enough disk space")) {
      QCOMPARE(refused.exit_code, 1);
      QVERIFY(refused.err.contains("the download needs 6"));
      QCOMPARE(hub_->ranges_of("model-00001-of-00040.safetensors").size(), std::size_t{0});
    }
  }

  void listsKnownModels() {
    const auto r = pull({"--list"}, env());
    QCOMPARE(r.exit_code, 0);
    QVERIFY(r.out.contains("openai/gpt-oss-20b"));
    QVERIFY(r.out.contains("openai/gpt-oss-120b"));
    QVERIFY(r.out.contains("zai-org/GLM-5.3-Flash"));
  }
};

QTEST_GUILESS_MAIN(TestHubCli)
#include "test_hub_cli.moc"
