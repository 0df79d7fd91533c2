// Model folders: single file, shards through the index, and each way an index can lie.
#include <QTemporaryDir>
#include <QtTest>

#include "engine/safetensors_writer.h"
#include "io/checkpoint.h"

using namespace day0;
using namespace day0::io;
using day0::test::RawTensor;

namespace {

std::filesystem::path make_dir(QTemporaryDir& dir) { return dir.path().toStdString(); }

void write_shard(const std::filesystem::path& path, const std::vector<RawTensor>& tensors) {
  test::write_file(path, test::safetensors_bytes(tensors));
}

RawTensor tensor(const std::string& name, std::uint64_t n, std::uint8_t seed) {
  return {name, "BF16", {n}, test::pattern_bytes(2 * n, seed)};
}

bool has(const Status& s, const char* fragment) {
  if (s.message().find(fragment) != std::string::npos) return true;
  qWarning("message \"%s\" lacks \"%s\"", s.message().c_str(), fragment);
  return false;
}

}  // namespace

class TestCheckpoint : public QObject {
  Q_OBJECT
 private slots:
  void singleFile() {
    QTemporaryDir tmp;
    const auto dir = make_dir(tmp);
    write_shard(dir / "model.safetensors", {tensor("a", 4, 1), tensor("b", 3, 2)});
    auto ckpt = Checkpoint::open(dir);
    QVERIFY2(ckpt.is_ok(), ckpt.status().message().c_str());
    QCOMPARE((*ckpt)->tensors().size(), std::size_t{2});
    const auto b = (*ckpt)->find("b");
    QVERIFY(b.has_value());
    QCOMPARE(b->file->data(*b->info)[0], test::pattern_bytes(6, 2)[0]);
  }

  void shardsThroughIndex() {
    QTemporaryDir tmp;
    const auto dir = make_dir(tmp);
    write_shard(dir / "model-00001-of-00002.safetensors", {tensor("a", 4, 1), tensor("b", 3, 2)});
    write_shard(dir / "model-00002-of-00002.safetensors", {tensor("c", 5, 3)});
    test::write_text(dir / "model.safetensors.index.json",
                     R"({"metadata":{"total_size":24},"weight_map":{"a":"model-00001-of-00002.safetensors",)"
                     R"("b":"model-00001-of-00002.safetensors","c":"model-00002-of-00002.safetensors"}})");
    auto ckpt = Checkpoint::open(dir);
    QVERIFY2(ckpt.is_ok(), ckpt.status().message().c_str());
    QCOMPARE((*ckpt)->shards().size(), std::size_t{2});
    QCOMPARE((*ckpt)->find("c")->file->path().filename().string(), std::string("model-00002-of-00002.safetensors"));
    QVERIFY((*ckpt)->warnings().empty());
  }

  void indexWarnings() {
    QTemporaryDir tmp;
    const auto dir = make_dir(tmp);
    write_shard(dir / "s1.safetensors", {tensor("a", 4, 1), tensor("extra", 2, 9)});
    test::write_text(dir / "model.safetensors.index.json",
                     R"({"metadata":{"total_size":999},"weight_map":{"a":"s1.safetensors"}})");
    auto ckpt = Checkpoint::open(dir);
    QVERIFY2(ckpt.is_ok(), ckpt.status().message().c_str());
    QVERIFY(!(*ckpt)->find("extra"));
    QCOMPARE((*ckpt)->warnings().size(), std::size_t{2});  // unlisted tensor, wrong total_size
  }

  void missingShard() {
    QTemporaryDir tmp;
    const auto dir = make_dir(tmp);
    write_shard(dir / "s1.safetensors", {tensor("a", 4, 1)});
    test::write_text(dir / "model.safetensors.index.json",
                     R"({"weight_map":{"a":"s1.safetensors","b":"s2.safetensors"}})");
    auto ckpt = Checkpoint::open(dir);
    QCOMPARE(ckpt.status().code(), ErrorCode::not_found);
    QVERIFY(has(ckpt.status(), "shard s2.safetensors"));
    QVERIFY(has(ckpt.status(), "missing"));
  }

  void indexPointsToWrongShard() {
    QTemporaryDir tmp;
    const auto dir = make_dir(tmp);
    write_shard(dir / "s1.safetensors", {tensor("a", 4, 1)});
    write_shard(dir / "s2.safetensors", {tensor("b", 4, 2)});
    test::write_text(dir / "model.safetensors.index.json",
                     R"({"weight_map":{"a":"s1.safetensors","b":"s1.safetensors","c":"s2.safetensors"}})");
    auto ckpt = Checkpoint::open(dir);
    QVERIFY(!ckpt.is_ok());
    QVERIFY(has(ckpt.status(), "places tensor"));
  }

  void duplicateAcrossShards() {
    QTemporaryDir tmp;
    const auto dir = make_dir(tmp);
    write_shard(dir / "a.safetensors", {tensor("w", 4, 1)});
    write_shard(dir / "b.safetensors", {tensor("w", 4, 2)});
    auto ckpt = Checkpoint::open(dir);  // no index: every .safetensors file is read
    QVERIFY(!ckpt.is_ok());
    QVERIFY(has(ckpt.status(), "appears in both a.safetensors and b.safetensors"));
  }

  void hostileShardNames() {
    for (const char* name : {"../outside.safetensors", "/etc/passwd", "sub/dir.safetensors", "..", ""}) {
      const std::string text = std::string(R"({"weight_map":{"a":")") + name + "\"}}";
      auto index = parse_checkpoint_index(text, "index.json");
      QVERIFY2(!index.is_ok(), name);
      QVERIFY(has(index.status(), "not a plain file name"));
    }
  }

  void malformedIndex() {
    QVERIFY(has(parse_checkpoint_index("{", "i.json").status(), "is not valid JSON"));
    QVERIFY(has(parse_checkpoint_index("[]", "i.json").status(), "not a JSON object"));
    QVERIFY(has(parse_checkpoint_index("{}", "i.json").status(), "no weight_map"));
    QVERIFY(has(parse_checkpoint_index(R"({"weight_map":{}})", "i.json").status(), "lists no tensors"));
    QVERIFY(has(parse_checkpoint_index(R"({"weight_map":{"a":3}})", "i.json").status(), "not a file name"));
    QVERIFY(has(parse_checkpoint_index(R"({"metadata":{"total_size":-5},"weight_map":{"a":"x"}})", "i.json").status(),
                "total_size"));
    auto ok = parse_checkpoint_index(R"({"metadata":{"total_size":1.2e3},"weight_map":{"a":"x","b":"x"}})", "i.json");
    QVERIFY(ok.is_ok());
    QCOMPARE(*ok->total_size, std::uint64_t{1200});
    QCOMPARE(ok->shards, std::vector<std::string>{"x"});
  }

  void corruptShardNamesTheFile() {
    QTemporaryDir tmp;
    const auto dir = make_dir(tmp);
    auto bytes = test::safetensors_bytes({tensor("a", 8, 1)});
    bytes.resize(bytes.size() - 3);
    test::write_file(dir / "model.safetensors", bytes);
    auto ckpt = Checkpoint::open(dir);
    QVERIFY(!ckpt.is_ok());
    QVERIFY(has(ckpt.status(), "model.safetensors"));
    QVERIFY(has(ckpt.status(), "tensor a"));
  }

  void noWeights() {
    QTemporaryDir tmp;
    auto ckpt = Checkpoint::open(make_dir(tmp));
    QCOMPARE(ckpt.status().code(), ErrorCode::not_found);
    QVERIFY(has(ckpt.status(), "no model.safetensors.index.json"));
    QCOMPARE(Checkpoint::open("/nonexistent/folder").status().code(), ErrorCode::not_found);
  }
};

QTEST_APPLESS_MAIN(TestCheckpoint)
#include "test_checkpoint.moc"
