// Models from the Hugging Face Hub, against a local server that speaks the Hub's endpoints: the
// listing (revision and tree APIs), redirects to the CDN without the token, resumption after a
// dropped connection, checksums, gated repositories, offline mode, pause and cancel, hostile
// listings, the disk check, the token file and the pre-download plan of the GLM-5.3-Flash shape.
#include <sys/stat.h>

#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "day0/model_info.h"
#include "hub/curated.h"
#include "hub/downloader.h"
#include "hub/fake_hub.h"
#include "hub/file_selection.h"
#include "hub/hub_client.h"
#include "hub/hub_token.h"
#include "hub/pull_plan.h"
#include "hub/shape_repo.h"

using namespace day0;
using namespace day0::hub;
using day0::test::FakeHub;
using day0::test::FakeRepo;
namespace fs = std::filesystem;

namespace {

const fs::path kDemo = fs::path(DAY0_SOURCE_DIR) / "tests/data/models/demo-random";
const fs::path kConfigs = fs::path(DAY0_TEST_DATA_DIR) / "configs";
constexpr const char* kShard1 = "model-00001-of-00002.safetensors";
constexpr const char* kShard2 = "model-00002-of-00002.safetensors";

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The demo model as a repository, with what a real one holds besides: gpt-oss's original/ and
// metal/ copies, a README and a GGUF file.
FakeRepo demo_repo(const std::string& id) {
  FakeRepo repo = FakeHub::repo_from_folder(id, kDemo);
  repo.files.push_back({"README.md", "# demo\n", false, "", 0});
  repo.files.push_back({"original/model.safetensors", read_file(kDemo / kShard1), true, "", 0});
  repo.files.push_back({"metal/model.bin", "metal weights", true, "", 0});
  repo.files.push_back({"demo.gguf", "gguf", true, "", 0});
  return repo;
}

HubClient client_for(const FakeHub& hub, const std::string& token = "") {
  HubConfig config;
  config.endpoint = hub.endpoint();
  config.token = token;
  return *HubClient::create(config);
}

struct Pulled {
  DownloadReport report;
  Progress last;
};

Pulled pull(const HubClient& client, const std::string& repo, const fs::path& dir, DownloadOptions options = {},
            DownloadControl* control = nullptr) {
  options.retry_delay_s = 0.01;
  options.progress_interval_s = 0.02;
  auto plan = plan_pull(client, *parse_repo_ref(repo), dir, {});
  if (!plan) qWarning("%s", plan.status().message().c_str());
  Pulled out;
  if (!plan) return out;
  Downloader d(client, plan->pinned, dir, options);
  out.report = d.run(
      plan->selection.files, [&](const Progress& p) { out.last = p; }, control);
  return out;
}

bool same_as_demo(const fs::path& dir, const std::string& name) {
  return read_file(dir / name) == read_file(kDemo / name);
}

}  // namespace

class TestHub : public QObject {
  Q_OBJECT
  std::unique_ptr<FakeHub> hub_;

 private slots:
  void initTestCase() {
    hub_ = std::make_unique<FakeHub>();
    hub_->add_repo(demo_repo("day0/demo"));
  }

  void repositoryNames() {
    QCOMPARE(parse_repo_ref("openai/gpt-oss-20b")->text(), std::string("openai/gpt-oss-20b"));
    QCOMPARE(parse_repo_ref("openai/gpt-oss-20b@v1.0")->revision, std::string("v1.0"));
    QCOMPARE(parse_repo_ref(" gpt2 ")->repo, std::string("gpt2"));
    const auto pasted = parse_repo_ref("https://huggingface.co/zai-org/GLM-5.3-Flash/tree/refs%2Fpr%2F1");
    QVERIFY(pasted);
    QCOMPARE(pasted->repo, std::string("zai-org/GLM-5.3-Flash"));
    QCOMPARE(pasted->revision, std::string("refs/pr/1"));
    for (const char* bad : {"", "a/b/c", "../etc", "a/..", "owner/na me", "owner/name@", "a--b/c", "/abs", "o/n@x y"})
      QVERIFY2(!parse_repo_ref(bad), bad);
    QVERIFY(parse_repo_ref("a/b/c").status().message().find("owner/name") != std::string::npos);
    QCOMPARE(url_encode("refs/pr/1", false), std::string("refs%2Fpr%2F1"));
    QCOMPARE(url_encode("a b/c.json", true), std::string("a%20b/c.json"));
  }

  void unsafeFileNames() {
    for (const char* bad : {"../x", "/etc/passwd", "a/../../b", "a//b", "a/./b", "a\\b", "", ".", "x/..", "a\nb"})
      QVERIFY2(!is_safe_repo_path(bad), bad);
    for (const char* good : {"config.json", "original/model.safetensors", "a..b/c", ".gitattributes"})
      QVERIFY2(is_safe_repo_path(good), good);
  }

  void fileSelection() {
    std::vector<RemoteFile> listed;
    for (const char* p :
         {"config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json", "chat_template.jinja",
          "special_tokens_map.json", "model.safetensors.index.json", "model-00001-of-00002.safetensors",
          "preprocessor_config.json", "README.md", ".gitattributes", "original/model.safetensors", "metal/model.bin",
          "pytorch_model.bin", "model.gguf", "consolidated.pth", "tokenizer.bin"})
      listed.push_back({p, 1, "", ""});
    const Selection s = select_files(listed);
    std::vector<std::string> names;
    for (const auto& f : s.files) names.push_back(f.path);
    QCOMPARE(names.size(), std::size_t{9});
    QCOMPARE(s.skipped.size(), std::size_t{8});
    QVERIFY(std::find(s.skipped.begin(), s.skipped.end(), "original/model.safetensors") != s.skipped.end());
    const Selection only = select_files(listed, split_patterns("original/*, config.json"));
    QCOMPARE(only.files.size(), std::size_t{2});
  }

  // The curated list's sizes and parameter counts are those of the shapes in tests/data/configs.
  void curatedFiguresComeFromTheShapes() {
    QCOMPARE(curated_models().size(), std::size_t{3});
    for (const auto& m : curated_models()) {
      const auto f = test::shape_figures(kConfigs / m.shape);
      QVERIFY2(f.bytes > 0, m.repo);
      QCOMPARE(m.weight_bytes, f.bytes);
      QCOMPARE(m.total_params, f.params);
      QCOMPARE(m.active_params, f.active);
      QVERIFY(parse_repo_ref(m.repo));
    }
  }

  void downloadsAModelFolder() {
    QTemporaryDir tmp;
    const fs::path dir = fs::path(tmp.path().toStdString()) / "m";
    const auto client = client_for(*hub_, "hf_secret");
    const auto plan = plan_pull(client, *parse_repo_ref("day0/demo"), dir, {});
    QVERIFY2(plan, plan.status().message().c_str());
    QCOMPARE(plan->commit, std::string("0123456789abcdef0123456789abcdef01234567"));
    QCOMPARE(plan->pinned.revision, plan->commit);
    QCOMPARE(plan->selection.files.size(), std::size_t{9});
    QCOMPARE(plan->selection.skipped.size(), std::size_t{5});  // day0-demo.json, README, original/, metal/, gguf
    QVERIFY(plan->info && plan->info->supported);
    QCOMPARE(plan->info->model_type, std::string("gpt_oss"));
    QVERIFY(plan->download_bytes > 400000);
    QVERIFY(plan->disk_problem.empty());
    QVERIFY(!fs::exists(dir));  // planning writes nothing there

    DownloadOptions options;
    options.progress_interval_s = 0.02;
    Downloader d(client, plan->pinned, dir, options);
    Progress last;
    const auto report = d.run(
        plan->selection.files, [&](const Progress& p) { last = p; }, nullptr);
    QVERIFY2(report.ok(), report.failures.empty() ? "cancelled" : report.failures[0].c_str());
    QCOMPARE(report.files_done, 9);
    QCOMPARE(last.files_done, 9);
    QCOMPARE(last.done_bytes, last.total_bytes);
    for (const auto& f : plan->selection.files) QVERIFY2(same_as_demo(dir, f.path), f.path.c_str());
    QVERIFY(!fs::exists(dir / "original"));
    QVERIFY(!hub_->cdn_saw_token());  // the token stays with the Hub
    QVERIFY(inspect_model(dir)->weights_present);

    // Pulling again reuses what is there, verified: nothing is fetched.
    const auto again = pull(client, "day0/demo", dir);
    QVERIFY(again.report.ok());
    QCOMPARE(again.report.files_reused, 9);
    QCOMPARE(again.report.bytes_downloaded, std::uint64_t{0});
    // A damaged complete file is noticed (its hash, not its size) and fetched anew.
    {
      std::fstream f(dir / kShard2, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(1000);
      f.put('\x55');
    }
    fs::last_write_time(dir / kShard2, fs::last_write_time(dir / kShard2) + std::chrono::seconds(1));
    const auto repaired = pull(client, "day0/demo", dir);
    QVERIFY(repaired.report.ok());
    QCOMPARE(repaired.report.files_done, 1);
    QVERIFY(same_as_demo(dir, kShard2));
  }

  void resumesAfterADroppedConnection() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    const std::string shard = std::string(kShard1);
    const auto before = hub_->ranges_of(shard).size();
    hub_->drop(shard, 100000, 1);
    const auto pulled = pull(client_for(*hub_), "day0/demo", dir);
    QVERIFY2(pulled.report.ok(), pulled.report.failures.empty() ? "" : pulled.report.failures[0].c_str());
    const auto ranges = hub_->ranges_of(shard);
    QCOMPARE(ranges.size(), before + 2);
    QCOMPARE(ranges[before], std::string("-"));
    QCOMPARE(ranges[before + 1], std::string("bytes=100000-"));
    QVERIFY(same_as_demo(dir, shard));
    QVERIFY(!fs::exists(dir / (shard + ".part")));
  }

  void resumesInTheNextRun() {
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    const std::string shard = std::string(kShard2);
    hub_->drop(shard, 70000, 100);
    DownloadOptions no_retries;
    no_retries.retries = 0;
    const auto failed = pull(client_for(*hub_), "day0/demo", dir, no_retries);
    QCOMPARE(failed.report.failures.size(), std::size_t{1});
    QVERIFY(failed.report.failures[0].find("connection") != std::string::npos);
    QCOMPARE(fs::file_size(dir / (shard + ".part")), std::uintmax_t{70000});
    QVERIFY(same_as_demo(dir, kShard1));  // the others are complete
    hub_->drop(shard, 0, 0);
    const auto resumed = pull(client_for(*hub_), "day0/demo", dir);
    QVERIFY(resumed.report.ok());
    QCOMPARE(hub_->ranges_of(shard).back(), std::string("bytes=70000-"));
    QCOMPARE(resumed.report.bytes_downloaded, std::uint64_t{fs::file_size(kDemo / shard) - 70000});
    QVERIFY(same_as_demo(dir, shard));
  }

  void rejectsACorruptFileAndKeepsTheGoodOnes() {
    FakeRepo repo = demo_repo("day0/corrupt");
    FakeHub::corrupt(repo, kShard2, 5000);
    hub_->add_repo(repo);
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    const auto pulled = pull(client_for(*hub_), "day0/corrupt", dir);
    QCOMPARE(pulled.report.failures.size(), std::size_t{1});
    const std::string& why = pulled.report.failures[0];
    QVERIFY2(why.find(kShard2) == 0 && why.find("SHA-256 mismatch") != std::string::npos, why.c_str());
    QVERIFY(!fs::exists(dir / kShard2));
    QVERIFY(!fs::exists(dir / (std::string(kShard2) + ".part")));
    QVERIFY(same_as_demo(dir, kShard1));
    QVERIFY(same_as_demo(dir, "tokenizer.json"));
    QCOMPARE(pulled.report.files_done, 8);
  }

  void smallFilesAreCheckedByTheirGitBlobId() {
    FakeRepo repo = demo_repo("day0/bad-config");
    for (auto& f : repo.files)
      if (f.path == "generation_config.json") f.served = std::string(f.content.size(), ' ');
    hub_->add_repo(repo);
    QTemporaryDir tmp;
    const auto pulled = pull(client_for(*hub_), "day0/bad-config", tmp.path().toStdString());
    QCOMPARE(pulled.report.failures.size(), std::size_t{1});
    QVERIFY(pulled.report.failures[0].find("git blob id mismatch") != std::string::npos);
  }

  void gatedRepositories() {
    FakeRepo repo = demo_repo("day0/gated");
    repo.gated = true;
    hub_->add_repo(repo);
    QTemporaryDir tmp;
    const auto refused = plan_pull(client_for(*hub_), *parse_repo_ref("day0/gated"), tmp.path().toStdString(), {});
    QVERIFY(!refused);
    const std::string why = refused.status().message();
    QVERIFY2(why.find("needs a Hugging Face token (HTTP 401") != std::string::npos, why.c_str());
    QVERIFY(why.find("is restricted") != std::string::npos);  // the Hub's own words
    QVERIFY(why.find("HF_TOKEN") != std::string::npos);
    const auto wrong =
        plan_pull(client_for(*hub_, "hf_wrong"), *parse_repo_ref("day0/gated"), tmp.path().toStdString(), {});
    QVERIFY(wrong.status().message().find("refused the token") != std::string::npos);
    const auto pulled = pull(client_for(*hub_, FakeHub::kToken), "day0/gated", tmp.path().toStdString());
    QVERIFY(pulled.report.ok());
    QCOMPARE(pulled.report.files_done, 9);
    QVERIFY(!hub_->cdn_saw_token());
  }

  void offlineModeNeverTouchesTheNetwork() {
    HubConfig config;
    config.endpoint = hub_->endpoint();
    config.offline = true;
    const auto client = *HubClient::create(config);
    const int before = hub_->listing_requests();
    const auto listing = client.list_files(*parse_repo_ref("day0/demo"));
    QVERIFY(!listing);
    QVERIFY(listing.status().message().find("offline mode (HF_HUB_OFFLINE)") != std::string::npos);
    QVERIFY(!client.fetch(*parse_repo_ref("day0/demo"), "config.json", 1000));
    QCOMPARE(hub_->listing_requests(), before);
    qputenv("HF_HUB_OFFLINE", "1");
    qputenv("HF_ENDPOINT", "http://mirror.example:8080/hf/");
    const HubConfig env = config_from_environment();
    qunsetenv("HF_HUB_OFFLINE");
    qunsetenv("HF_ENDPOINT");
    QVERIFY(env.offline);
    QCOMPARE(env.endpoint, std::string("http://mirror.example:8080/hf"));
  }

  void theTreeApiWhenTheListingHasNoSizes() {
    FakeRepo repo = demo_repo("day0/tree");
    repo.sizes_in_listing = false;
    hub_->add_repo(repo);
    const auto listing = client_for(*hub_).list_files(*parse_repo_ref("day0/tree"));
    QVERIFY2(listing, listing.status().message().c_str());
    QCOMPARE(listing->files.size(), repo.files.size());  // all pages, the folder entry left out
    for (const auto& f : listing->files)
      if (f.path == kShard1) {
        QCOMPARE(f.size, std::uint64_t{fs::file_size(kDemo / kShard1)});
        QCOMPARE(f.sha256.size(), std::size_t{64});
      }
    QTemporaryDir tmp;
    QVERIFY(pull(client_for(*hub_), "day0/tree", tmp.path().toStdString()).report.ok());
  }

  void hostileListingsAreRefused() {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"{not json", "malformed JSON"},
        {"[1, 2, 3]", "did not answer with a file list"},
        {R"({"sha": "x", "siblings": [{"rfilename": "../x", "size": 3}]})", "would leave the download folder"},
        {R"({"siblings": [{"rfilename": "/etc/passwd", "size": 3}]})", "would leave the download folder"},
        {R"({"siblings": [{"rfilename": "a/../../b", "size": 3}]})", "would leave the download folder"},
        {R"({"siblings": [{"rfilename": "config.json", "size": -5}]})", "gives no size"},
        {R"({"siblings": [{"rfilename": "config.json", "size": 1e30}]})", "gives no size"},
        {R"({"siblings": [{"rfilename": "m.safetensors", "size": 18000000000000000000}]})", "more than any model file"},
        {R"({"siblings": [{"rfilename": "m.safetensors", "size": 3, "lfs": {"sha256": "zz", "size": 3}}]})",
         "no valid SHA-256"},
        {R"({"siblings": [{"size": 3}]})", "has no 'rfilename'"},
    };
    int i = 0;
    for (const auto& [body, expected] : cases) {
      FakeRepo repo;
      repo.id = "bad/case" + std::to_string(i++);
      repo.raw_listing = body;
      hub_->add_repo(repo);
      const auto listing = client_for(*hub_).list_files(*parse_repo_ref(repo.id));
      QVERIFY2(!listing, body.c_str());
      QVERIFY2(listing.status().message().find(expected) != std::string::npos, listing.status().message().c_str());
    }
    const auto missing = client_for(*hub_).list_files(*parse_repo_ref("nobody/nothing"));
    QVERIFY(missing.status().message().find("was not found (HTTP 404") != std::string::npos);
    const auto unreachable = HubClient::create({"http://127.0.0.1:1", "", false})->list_files(*parse_repo_ref("a/b"));
    QVERIFY(unreachable.status().message().find("connection to http://127.0.0.1:1 failed") != std::string::npos);
    QVERIFY(!HubClient::create({"ftp://example.com", "", false}));
  }

  void theDiskCheckRefusesEarly() {
    QTemporaryDir tmp;
    const fs::path dir = fs::path(tmp.path().toStdString()) / "not/yet/there";
    QVERIFY(free_disk_bytes(dir));
    const Status s = check_disk_room(dir, 1ull << 60);
    QCOMPARE(s.code(), ErrorCode::out_of_memory);
    QVERIFY(s.message().find("not enough disk space") != std::string::npos);
    QVERIFY(check_disk_room(dir, 1000));
  }

  void pauseResumeAndCancel() {
    hub_->throttle(60000);
    QTemporaryDir tmp;
    const fs::path dir = tmp.path().toStdString();
    DownloadControl control;
    Pulled result;
    std::thread worker([&] { result = pull(client_for(*hub_), "day0/demo", dir, {}, &control); });
    const auto part_bytes = [&] {
      std::uint64_t n = 0;
      std::error_code ec;
      for (const auto& e : fs::recursive_directory_iterator(dir, ec))
        if (e.path().extension() == ".part") n += e.file_size();
      return n;
    };
    QTRY_VERIFY_WITH_TIMEOUT(part_bytes() > 20000, 10000);
    control.pause();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const auto paused_at = part_bytes();
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    QCOMPARE(part_bytes(), paused_at);  // nothing moves while paused
    control.resume();
    QTRY_VERIFY_WITH_TIMEOUT(part_bytes() > paused_at, 10000);
    control.cancel();
    worker.join();
    hub_->throttle(0);
    QVERIFY(result.report.cancelled);
    QVERIFY(part_bytes() > 0);  // kept for the next run
    const auto finished = pull(client_for(*hub_), "day0/demo", dir);
    QVERIFY(finished.report.ok());
    QCOMPARE(part_bytes(), std::uint64_t{0});
    QVERIFY(same_as_demo(dir, kShard1) && same_as_demo(dir, kShard2));
  }

  void theTokenFileIsTheOwnersOnly() {
    QTemporaryDir tmp;
    qputenv("XDG_CONFIG_HOME", tmp.path().toUtf8());
    qputenv("HF_HOME", (tmp.path() + "/hf").toUtf8());
    qunsetenv("HF_TOKEN");
    QVERIFY(read_token().empty());
    QVERIFY(!has_saved_token());
    QVERIFY(save_token("  hf_abc123\n"));
    struct stat st {};
    QCOMPARE(::stat(token_file().c_str(), &st), 0);
    QCOMPARE(st.st_mode & 0777, 0600u);
    QCOMPARE(read_token(), std::string("hf_abc123"));
    QVERIFY(has_saved_token());
    qputenv("HF_TOKEN", "hf_from_env");
    QCOMPARE(read_token(), std::string("hf_from_env"));
    qunsetenv("HF_TOKEN");
    QVERIFY(!save_token("two words"));
    QVERIFY(save_token(""));
    QVERIFY(!fs::exists(token_file()));
    // huggingface-cli login's file is the last resort.
    fs::create_directories(tmp.path().toStdString() + "/hf");
    std::ofstream(tmp.path().toStdString() + "/hf/token") << "hf_login\n";
    QCOMPARE(read_token(), std::string("hf_login"));
    qunsetenv("XDG_CONFIG_HOME");
    qunsetenv("HF_HOME");
  }

  // GLM-5.3-Flash as released is far larger than this machine: the plan comes from config.json and
  // the index alone, and says what it is before anything large moves.
  void planOfTheGlmShape() {
    hub_->add_repo(test::shape_repo("zai-org/GLM-5.3-Flash", kConfigs / "glm-5.3-flash-shape.config.json", 40));
    QTemporaryDir tmp;
    const auto plan =
        plan_pull(client_for(*hub_), *parse_repo_ref("zai-org/GLM-5.3-Flash"), tmp.path().toStdString(), {});
    QVERIFY2(plan, plan.status().message().c_str());
    QVERIFY(plan->info);
    QCOMPARE(plan->info->model_type, std::string("glm5_next"));
    QVERIFY(plan->info->supported);
    QCOMPARE(plan->info->routed_experts, std::int64_t{288});
    const auto figures = test::shape_figures(kConfigs / "glm-5.3-flash-shape.config.json");
    QCOMPARE(plan->info->total_params, figures.params);
    QCOMPARE(plan->selection.files.size(), std::size_t{42});
    QVERIFY(plan->weight_bytes > figures.bytes);
    QVERIFY(plan->bytes_per_token > 0);
    QVERIFY(!plan->fit_text.empty());
    const std::string text = format_pull_plan(*plan);
    QVERIFY2(text.find("glm5_next") != std::string::npos, text.c_str());
    QVERIFY(text.find("Day0 runs it") != std::string::npos);
    QVERIFY(text.find("active per token") != std::string::npos);
    QVERIFY(text.find("288 routed x 42 MoE layers, top-8") != std::string::npos);
    QVERIFY(text.find("Fits") != std::string::npos);
    // Nothing but the two small files was read.
    QCOMPARE(hub_->ranges_of("model-00001-of-00040.safetensors").size(), std::size_t{0});
  }
};

QTEST_GUILESS_MAIN(TestHub)
#include "test_hub.moc"
