// What the fuzzers found, as targeted tests (the inputs themselves replay from
// tests/fuzz/*/regressions):
//  - a JSON number too large for a double ("1e999") made nlohmann::json throw out_of_range,
//    which the readers did not catch: every JSON reader must return an error instead;
//  - a Jinja macro kept its defining scope alive through a cycle, leaking every render of a
//    template that defines a macro (the gpt-oss template does);
//  - namespaces nested in namespaces could build chains deep enough to overflow the stack
//    when freed; namespace attributes now take plain data only;
//  - undefined behaviour in the interpreter's arithmetic: '%d' of a float past 2^63, '%d' and
//    '%x' of -2^63, range() steps whose multiples pass 2^63, widths and precisions past INT_MAX
//    (and a precision of 2^31 asking printf for 4 GB); a checkpoint index total_size past 2^64;
//  - stb_image 2.27 wrote past a JPEG Huffman table of more than 256 codes, and called
//    memcpy(NULL, ..., 0) for an empty first PNG IDAT chunk.
#include <malloc.h>

#include <QtTest>
#include <cstdint>
#include <string>

#include "day0/chat_template.h"
#include "day0/tokenizer.h"
#include "io/checkpoint.h"
#include "io/image_decode.h"
#include "io/json_util.h"
#include "io/model_config.h"
#include "io/safetensors.h"

using namespace day0;

namespace {

std::vector<std::uint8_t> safetensors_bytes(std::string header) {
  header.append((8 - header.size() % 8) % 8, ' ');
  std::vector<std::uint8_t> out(8);
  std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(n >> (8 * i));
  out.insert(out.end(), header.begin(), header.end());
  out.resize(out.size() + 4);
  return out;
}

std::string render(const std::string& source, const std::string& context = "{}") {
  auto t = ChatTemplate::parse(source, "t");
  if (!t) return "parse error: " + t.status().message();
  auto out = t->render_json(context);
  return out ? out.value() : "error: " + out.status().message();
}

}  // namespace

class TestFuzzFindings : public QObject {
  Q_OBJECT

 private slots:
  void json_number_overflow_is_an_error() {
    const std::string huge = "1e999";
    auto parsed = io::parse_json("{\"a\": " + huge + "}", "x.json");
    QVERIFY(!parsed.is_ok());
    QVERIFY(parsed.status().message().find("x.json") != std::string::npos);

    auto index = io::parse_checkpoint_index("{\"metadata\": {\"total_size\": " + huge + "}, \"weight_map\": {}}",
                                            "model.safetensors.index.json");
    QVERIFY(!index.is_ok());
    QVERIFY(index.status().message().find("model.safetensors.index.json") != std::string::npos);

    const auto bytes =
        safetensors_bytes("{\"a\": {\"dtype\": \"F32\", \"shape\": [" + huge + "], \"data_offsets\": [0, 4]}}");
    auto header = io::parse_safetensors_header(bytes, bytes.size(), "model.safetensors");
    QVERIFY(!header.is_ok());
    QVERIFY(header.status().message().find("model.safetensors") != std::string::npos);

    QVERIFY(!io::ModelConfig::parse("{\"model_type\": \"gpt_oss\", \"hidden_size\": -" + huge + "}").is_ok());
    QVERIFY(
        !Tokenizer::from_json("{\"model\": {\"type\": \"BPE\", \"dropout\": " + huge + "}}", "tokenizer.json").is_ok());
    QVERIFY(render("{{ 1 }}", "{\"messages\": [" + huge + "]}").rfind("error: ", 0) == 0);
  }

  void checkpoint_total_size_past_2_64_is_an_error() {
    auto index = io::parse_checkpoint_index("{\"metadata\": {\"total_size\": 1e30}, \"weight_map\": {}}", "index.json");
    QVERIFY(!index.is_ok());
    QVERIFY(index.status().message().find("total_size") != std::string::npos);
    index = io::parse_checkpoint_index(
        "{\"metadata\": {\"total_size\": 4096.0}, \"weight_map\": {\"a\": \"model.safetensors\"}}", "index.json");
    QVERIFY(index.is_ok());
    QCOMPARE(*index->total_size, std::uint64_t{4096});
  }

  void an_empty_png_idat_chunk_changes_nothing() {
    QFile file(QString(DAY0_SOURCE_DIR) + "/tests/fuzz/image/corpus/rgb-8x6.png");
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray png = file.readAll();
    const qsizetype idat = png.indexOf("IDAT") - 4;
    QVERIFY(idat > 8);
    QByteArray with_empty = png;
    with_empty.insert(idat, QByteArray("\0\0\0\0IDAT\x35\xaf\x06\x1e", 12));
    auto bytes = [](const QByteArray& a) {
      return std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(a.data()),
                                           static_cast<std::size_t>(a.size()));
    };
    auto plain = io::decode_image(bytes(png), "plain.png");
    auto padded = io::decode_image(bytes(with_empty), "padded.png");
    QVERIFY(plain.is_ok());
    QVERIFY2(padded.is_ok(), padded.status().message().c_str());
    QCOMPARE(padded->width, std::int64_t{8});
    QCOMPARE(padded->height, std::int64_t{6});
    QVERIFY(padded->pixels == plain->pixels);
  }

  void a_jpeg_huffman_table_of_more_than_256_codes_is_refused() {
    QFile file(QString(DAY0_SOURCE_DIR) + "/tests/fuzz/image/regressions/jpeg-huffman-table-over-256-codes.jpg");
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray jpeg = file.readAll();
    auto r = io::decode_image(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(jpeg.data()),
                                                            static_cast<std::size_t>(jpeg.size())),
                              "hostile.jpg");
    QVERIFY(!r.is_ok());
    QVERIFY2(r.status().message().find("Huffman table") != std::string::npos, r.status().message().c_str());
  }

  void integer_formatting_at_the_limits() {
    // Expected strings are Python's.
    QCOMPARE(
        render("{{ '%d' % 1e300 }}"),
        std::string("1000000000000000052504760255204420248704468581108159154915854115511802457988908195786371375080"
                    "447864043704443832883878176942523235360430575644792184786706982848387200926575803737830233794"
                    "788090059368953234970799945081119038967640880074652742780142494579258788820056842838115669472"
                    "196386865459400540160"));
    QCOMPARE(render("{{ '%d|%x' % ((-9223372036854775807 - 1), (-9223372036854775807 - 1)) }}"),
             std::string("-9223372036854775808|-8000000000000000"));
    QCOMPARE(render("{{ '%5.3d|%d|%d' % (-7, -0.5, -2.7) }}"), std::string(" -007|0|-2"));
    QCOMPARE(render("{{ range(-9223372036854775807 - 1, 9223372036854775807, 4611686018427387904) | list }}"),
             std::string("[-9223372036854775808, -4611686018427387904, 0, 4611686018427387904]"));
    QCOMPARE(render("{{ ('%.600f' % 1.0) | length }}"), std::string("602"));
    QVERIFY(render("{{ '%d' % (1e308 * 10) }}").find("cannot convert float infinity to integer") != std::string::npos);
    for (const char* source : {"{{ '%.2147483647f' % 1.0 }}", "{{ '%99999999999d' % 1 }}",
                               "{{ '{:99999999999}'.format(1) }}", "{{ '%*d' % (9223372036854775807, 1) }}"})
      QVERIFY2(render(source).rfind("error: ", 0) == 0, source);
  }

  void namespaces_take_plain_data() {
    // Expected renderings are jinja2's.
    QCOMPARE(render("{% set ns = namespace(items=[], n=0) %}{% for x in [1, 2] %}{% set ns.items = ns.items + "
                    "[{'v': x}] %}{% set ns.n = ns.n + x %}{% endfor %}{{ ns.items | tojson }} {{ ns.n }}"),
             std::string("[{\"v\": 1}, {\"v\": 2}] 3"));
    for (const char* source : {
             "{% set ns = namespace(x=1) %}{% set ns.x = ns %}",
             "{% set a = namespace() %}{% set b = namespace(inner=a) %}",
             "{% set a = namespace() %}{% set b = namespace() %}{% set b.l = [1, {'k': a}] %}",
             "{% macro m() %}{% endmacro %}{% set ns = namespace() %}{% set ns.f = m %}",
             "{% set ns = namespace() %}{% for x in [1] %}{% set ns.l = loop %}{% endfor %}",
         }) {
      const std::string out = render(source);
      QVERIFY2(out.find("a namespace attribute cannot hold") != std::string::npos, (source + (" -> " + out)).c_str());
    }
  }

  void a_long_namespace_chain_fails_without_overflowing_the_stack() {
    const std::string out = render(
        "{% set ns = namespace(x=none) %}{% set st = namespace(cur=ns) %}{% for i in range(200000) %}"
        "{% set n = namespace(x=none) %}{% set c = st.cur %}{% set c.x = n %}{% set st.cur = n %}"
        "{% endfor %}{{ ns }}");
    QVERIFY2(out.rfind("error: ", 0) == 0, out.c_str());
  }

  void rendering_a_macro_template_does_not_leak() {
    auto t = ChatTemplate::parse(
        "{% set first = messages[0].content %}{% macro greet(name) %}Hello {{ name }}{{ caller() if caller is defined "
        "}}{% endmacro %}"
        "{% set ns = namespace(n=0) %}{% for m in messages %}{% call greet(m.content) %}!{% endcall %}"
        "{% set ns.n = ns.n + 1 %}{% endfor %}{{ ns.n }}",
        "t");
    QVERIFY(t.is_ok());
    const std::string context =
        "{\"messages\": [{\"role\": \"user\", \"content\": \"" + std::string(2000, 'x') + "\"}]}";
    for (int i = 0; i < 50; ++i) QVERIFY(t->render_json(context).is_ok());  // warm up the allocator
    const std::size_t before = mallinfo2().uordblks;
    for (int i = 0; i < 2000; ++i) QVERIFY(t->render_json(context).is_ok());
    const std::size_t after = mallinfo2().uordblks;
    // Leaking the top-level scope kept each render's copy of the 2 kB message (`first`): 2000
    // renders would hold over 4 MB.
    QVERIFY2(after < before + (512u << 10), (std::to_string(before) + " -> " + std::to_string(after)).c_str());
  }
};

QTEST_APPLESS_MAIN(TestFuzzFindings)
#include "test_fuzz_findings.moc"
