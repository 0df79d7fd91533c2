// config.json: typed access, nested text/vision configs, clear errors.
#include <QtTest>

#include "io/model_config.h"

using namespace day0;
using namespace day0::io;

namespace {
bool has(const Status& s, const char* fragment) {
  if (s.message().find(fragment) != std::string::npos) return true;
  qWarning("message \"%s\" lacks \"%s\"", s.message().c_str(), fragment);
  return false;
}
}  // namespace

class TestModelConfig : public QObject {
  Q_OBJECT
 private slots:
  void flatConfig() {
    auto c = ModelConfig::parse(R"({"model_type":"gpt_oss","hidden_size":2880,"rms_norm_eps":1e-5,
      "tie_word_embeddings":false,"layer_types":["sliding_attention","full_attention"],"eos":[1,2],
      "head_dim":64.0,"rope_parameters":{"rope_type":"yarn","factor":32.0}})");
    QVERIFY2(c.is_ok(), c.status().message().c_str());
    QCOMPARE(c->model_type(), std::string("gpt_oss"));
    const ConfigView t = c->text();  // no text_config: the root
    QCOMPARE(t.get_int("hidden_size").value(), std::int64_t{2880});
    QCOMPARE(t.get_int("head_dim").value(), std::int64_t{64});  // 64.0 is an exact integer
    QCOMPARE(t.get_float("rms_norm_eps").value(), 1e-5);
    QCOMPARE(t.get_bool("tie_word_embeddings").value(), false);
    QCOMPARE(t.get_string_list("layer_types").value().size(), std::size_t{2});
    QCOMPARE(t.get_int_list("eos").value(), (std::vector<std::int64_t>{1, 2}));
    QCOMPARE(t.child("rope_parameters").value().get_float("factor").value(), 32.0);
    QCOMPARE(t.get_int_or("num_local_experts", 8).value(), std::int64_t{8});
    QVERIFY(!c->vision().has_value());
  }

  void nestedConfigs() {
    auto c = ModelConfig::parse(R"({"model_type":"glm5_next","text_config":{"hidden_size":64,
      "model_type":"glm5_next_text"},"vision_config":{"depth":2}})");
    QVERIFY(c.is_ok());
    QCOMPARE(c->text().get_int("hidden_size").value(), std::int64_t{64});
    QVERIFY(c->vision().has_value());
    QCOMPARE(c->vision()->get_int("depth").value(), std::int64_t{2});
    auto missing = c->text().get_int("num_hidden_layers");
    QCOMPARE(missing.status().code(), ErrorCode::not_found);
    QVERIFY(has(missing.status(), "config.json: the field text_config.num_hidden_layers is missing"));
  }

  void wrongTypesAndRanges() {
    auto c = ModelConfig::parse(R"({"model_type":"x","hidden_size":"4096","layers":-3,"eps":"small",
      "flag":1,"list":[1,"a"],"frac":2.5,"nested":5,"big":18446744073709551615,"n":null})");
    QVERIFY(c.is_ok());
    const ConfigView r = c->root();
    QVERIFY(has(r.get_int("hidden_size").status(), "hidden_size must be an integer, got the string \"4096\""));
    QVERIFY(has(r.get_int("layers", {1, 100}).status(), "layers must be between 1 and 100, got -3"));
    QVERIFY(has(r.get_float("eps").status(), "must be a number"));
    QVERIFY(has(r.get_bool("flag").status(), "must be true or false, got the integer 1"));
    QVERIFY(has(r.get_int_list("list").status(), "a list of integers"));
    QVERIFY(has(r.get_int("frac").status(), "must be an integer, got the number 2.5"));
    QVERIFY(has(r.child("nested").status(), "must be an object"));
    QVERIFY(!r.get_int("big").is_ok());
    QVERIFY(has(r.get_int_or("hidden_size", 1).status(), "must be an integer"));  // present but wrong: error
    QCOMPARE(r.get_int_or("n", 7).value(), std::int64_t{7});                         // null counts as absent
  }

  void invalidDocuments() {
    QVERIFY(has(ModelConfig::parse("{").status(), "is not valid JSON"));
    QVERIFY(has(ModelConfig::parse("[1]").status(), "not a JSON object"));
    QVERIFY(has(ModelConfig::parse("{\"hidden_size\":1}").status(), "no model_type"));
    QVERIFY(has(ModelConfig::parse(R"({"model_type":"x","text_config":[1]})").status(), "text_config must be an object"));
    std::string bad_utf8 = "{\"model_type\":\"\xc3\x28\"}";
    QVERIFY(!ModelConfig::parse(bad_utf8).is_ok());
    QCOMPARE(ModelConfig::load("/nonexistent/dir").status().code(), ErrorCode::not_found);
  }
};

QTEST_APPLESS_MAIN(TestModelConfig)
#include "test_model_config.moc"
