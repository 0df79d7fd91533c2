// The safetensors reader: every dtype, and each kind of malformed file gets a clear error.
#include <QTemporaryDir>
#include <QtTest>
#include <cstring>

#include "engine/safetensors_writer.h"
#include "io/safetensors.h"

using namespace day0;
using namespace day0::io;
using day0::test::RawTensor;

namespace {

Result<SafetensorsHeader> parse(const std::vector<std::uint8_t>& bytes) {
  return parse_safetensors_header(bytes, bytes.size(), "test.safetensors");
}

Result<SafetensorsHeader> parse_header_text(const std::string& header, std::size_t data_bytes) {
  return parse(test::safetensors_bytes(header, std::vector<std::uint8_t>(data_bytes, 0)));
}

// The error message must contain every fragment.
bool message_has(const Status& s, std::initializer_list<const char*> fragments) {
  for (const char* f : fragments)
    if (s.message().find(f) == std::string::npos) {
      qWarning("message \"%s\" lacks \"%s\"", s.message().c_str(), f);
      return false;
    }
  return true;
}

}  // namespace

class TestSafetensors : public QObject {
  Q_OBJECT
 private slots:
  void readsEveryDtype() {
    // One tensor of each dtype, with sizes that exercise sub-byte packing.
    const std::vector<std::pair<std::string, std::uint64_t>> dtypes = {
        {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"I16", 2},  {"U16", 2},     {"I32", 4},     {"U32", 4},
        {"I64", 8},  {"U64", 8}, {"F16", 2}, {"BF16", 2}, {"F32", 4},     {"F64", 8},     {"C64", 8},
        {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"F8_E8M0", 1}};
    std::vector<RawTensor> tensors;
    std::uint8_t seed = 1;
    for (const auto& [dtype, size] : dtypes)
      tensors.push_back({"t." + dtype, dtype, {3, 2}, test::pattern_bytes(6 * size, seed++)});
    tensors.push_back({"t.F4", "F4", {4, 8}, test::pattern_bytes(16, seed++)});        // 32 x 4 bits
    tensors.push_back({"t.F6_E2M3", "F6_E2M3", {4}, test::pattern_bytes(3, seed++)});  // 4 x 6 bits
    tensors.push_back({"t.F6_E3M2", "F6_E3M2", {8}, test::pattern_bytes(6, seed++)});
    tensors.push_back({"t.scalar", "F32", {}, test::pattern_bytes(4, seed++)});
    tensors.push_back({"t.empty", "BF16", {0, 7}, {}});

    QTemporaryDir dir;
    const auto path = std::filesystem::path(dir.path().toStdString()) / "all.safetensors";
    test::write_file(path, test::safetensors_bytes(tensors));
    auto file = SafetensorsFile::open(path);
    QVERIFY2(file.is_ok(), file.status().message().c_str());
    QCOMPARE(file->tensors().size(), tensors.size());
    for (const auto& t : tensors) {
      const TensorInfo* info = file->find(t.name);
      QVERIFY2(info != nullptr, t.name.c_str());
      QCOMPARE(dtype_name(info->dtype), std::string_view(t.dtype));
      QCOMPARE(info->shape, t.shape);
      const auto data = file->data(*info);
      QCOMPARE(data.size(), t.bytes.size());
      QVERIFY(std::equal(data.begin(), data.end(), t.bytes.begin()));
    }
    QCOMPARE(file->find("t.scalar")->numel, std::uint64_t{1});
    QCOMPARE(file->find("t.empty")->numel, std::uint64_t{0});
    QVERIFY(file->find("missing") == nullptr);
    // The header alone reads the same way, without mapping the file.
    auto header = read_safetensors_header(path);
    QVERIFY(header.is_ok());
    QCOMPARE(header->tensors.size(), tensors.size());
    QCOMPARE(file->file_offset(*file->find(tensors[1].name)), header->data_offset + tensors[0].bytes.size());
  }

  void readsMetadataAndUnorderedHeader() {
    // Offsets need not follow the header's key order.
    const std::string header =
        R"({"__metadata__":{"format":"pt"},"b":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
        R"("a":{"dtype":"U8","shape":[3],"data_offsets":[2,5]}})";
    auto h = parse_header_text(header, 5);
    QVERIFY2(h.is_ok(), h.status().message().c_str());
    QCOMPARE(h->metadata.at("format"), std::string("pt"));
    QCOMPARE(h->tensors.front().name, std::string("b"));
  }

  void rejectsTinyAndTruncatedFiles() {
    for (std::size_t n : {0, 1, 7}) {
      auto h = parse(std::vector<std::uint8_t>(n, 0));
      QVERIFY(!h.is_ok());
      QVERIFY(message_has(h.status(), {"test.safetensors", "8-byte header length"}));
    }
    // A header that claims more bytes than the file has.
    auto bytes = test::safetensors_bytes({{"w", "F32", {4}, test::pattern_bytes(16, 3)}});
    std::vector<std::uint8_t> cut(bytes.begin(), bytes.begin() + 20);
    auto h = parse(cut);
    QVERIFY(!h.is_ok());
    QCOMPARE(h.status().code(), ErrorCode::corrupt_data);
    QVERIFY(message_has(h.status(), {"truncated"}));
    // Data cut short: the last tensor ends past the end of file.
    std::vector<std::uint8_t> short_data(bytes.begin(), bytes.end() - 4);
    h = parse(short_data);
    QVERIFY(!h.is_ok());
    QVERIFY(message_has(h.status(), {"tensor w", "ends at data byte 16", "12 bytes", "truncated"}));
  }

  void rejectsHugeHeaderClaims() {
    std::vector<std::uint8_t> bytes(16, 0);
    const std::uint64_t n = kSafetensorsMaxHeaderBytes + 1;
    std::memcpy(bytes.data(), &n, 8);
    auto h = parse(bytes);
    QVERIFY(!h.is_ok());
    QVERIFY(message_has(h.status(), {"100000001 bytes", "over the limit"}));
    const std::uint64_t huge = ~0ull;  // 8 + n would overflow
    std::memcpy(bytes.data(), &huge, 8);
    QVERIFY(!parse(bytes).is_ok());
  }

  void rejectsBadJson() {
    QVERIFY(message_has(parse_header_text("[1,2]", 0).status(), {"does not start with '{'"}));
    QVERIFY(message_has(parse_header_text("{\"a\":", 0).status(), {"is not valid JSON"}));
    // Invalid UTF-8 inside a tensor name.
    std::string bad = "{\"w";
    bad += static_cast<char>(0xff);
    bad += "\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}";
    auto h = parse_header_text(bad, 1);
    QVERIFY(!h.is_ok());
    QVERIFY(message_has(h.status(), {"UTF-8"}));
    QVERIFY(message_has(parse_header_text(R"({"__metadata__":{"k":1}})", 0).status(), {"__metadata__.k"}));
  }

  void rejectsDuplicateNames() {
    const std::string header = R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                               R"("w":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})";
    auto h = parse_header_text(header, 2);
    QVERIFY(!h.is_ok());
    QVERIFY(message_has(h.status(), {"\"w\" twice"}));
  }

  void rejectsWrongSizesAndDtypes() {
    // Shape x dtype disagrees with the offsets ("wrong dtype size").
    auto h = parse_header_text(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,12]}})", 12);
    QVERIFY(!h.is_ok());
    QVERIFY(message_has(h.status(), {"tensor w", "24 bytes", "12 bytes"}));
    h = parse_header_text(R"({"w":{"dtype":"F7","shape":[1],"data_offsets":[0,1]}})", 1);
    QVERIFY(message_has(h.status(), {"unknown dtype \"F7\""}));
    h = parse_header_text(R"({"w":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}})", 2);
    QVERIFY(message_has(h.status(), {"does not fill whole bytes"}));
    h = parse_header_text(R"({"w":{"dtype":"U8","shape":[-1],"data_offsets":[0,1]}})", 1);
    QVERIFY(message_has(h.status(), {"shape[0]", "non-negative integer"}));
    h = parse_header_text(R"({"w":{"dtype":"U8","shape":[1.5],"data_offsets":[0,1]}})", 1);
    QVERIFY(!h.is_ok());
    h = parse_header_text(R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[0]}})", 1);
    QVERIFY(message_has(h.status(), {"data_offsets"}));
    h = parse_header_text(R"({"w":{"shape":[1],"data_offsets":[0,1]}})", 1);
    QVERIFY(message_has(h.status(), {"dtype"}));
    h = parse_header_text(R"({"w":[1,2]})", 0);
    QVERIFY(message_has(h.status(), {"not an object"}));
  }

  void rejectsAbsurdDimensions() {
    // The element count overflows 64 bits.
    auto h = parse_header_text(
        R"({"w":{"dtype":"U8","shape":[4294967296,4294967296,16],"data_offsets":[0,1]}})", 1);
    QVERIFY(message_has(h.status(), {"overflows 64 bits"}));
    // The byte count overflows even though the element count does not.
    h = parse_header_text(R"({"w":{"dtype":"F64","shape":[4611686018427387904],"data_offsets":[0,1]}})", 1);
    QVERIFY(message_has(h.status(), {"overflows 64 bits"}));
    // Plausible shape but absurdly large: caught by the file size.
    h = parse_header_text(R"({"w":{"dtype":"BF16","shape":[1000000,1000000],"data_offsets":[0,2000000000000]}})", 8);
    QVERIFY(message_has(h.status(), {"ends at data byte 2000000000000", "truncated"}));
  }

  void rejectsGapsOverlapsAndTrailingBytes() {
    auto h = parse_header_text(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
                               R"("b":{"dtype":"U8","shape":[2],"data_offsets":[3,5]}})",
                               5);
    QVERIFY(message_has(h.status(), {"tensor b", "begins at data byte 3", "a gap"}));
    h = parse_header_text(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
                          R"("b":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}})",
                          3);
    QVERIFY(message_has(h.status(), {"an overlap"}));
    h = parse_header_text(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}})", 3);
    QVERIFY(message_has(h.status(), {"begins at data byte 1"}));
    h = parse_header_text(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})", 3);
    QVERIFY(message_has(h.status(), {"trailing bytes"}));
    h = parse_header_text(R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[2,0]}})", 2);
    QVERIFY(message_has(h.status(), {"before it begins"}));
  }

  void missingAndNonRegularFiles() {
    auto file = SafetensorsFile::open("/nonexistent/model.safetensors");
    QCOMPARE(file.status().code(), ErrorCode::not_found);
    QTemporaryDir dir;
    file = SafetensorsFile::open(dir.path().toStdString());
    QVERIFY(!file.is_ok());
    QVERIFY(message_has(file.status(), {"not a regular file"}));
  }

  void randomCorruptionNeverCrashes() {
    // Flip bytes of a valid file's header region: every outcome is a clean success or error.
    auto bytes = test::safetensors_bytes({{"a", "BF16", {4, 4}, test::pattern_bytes(32, 1)},
                                          {"b", "U8", {5}, test::pattern_bytes(5, 2)}});
    std::uint32_t x = 12345;
    int errors = 0;
    for (int trial = 0; trial < 3000; ++trial) {
      auto copy = bytes;
      for (int k = 0; k < 3; ++k) {
        x = x * 1103515245u + 12345u;
        const std::size_t pos = (x >> 8) % std::min<std::size_t>(copy.size(), 140);
        copy[pos] = static_cast<std::uint8_t>(x >> 3);
      }
      const std::size_t cut = (x >> 4) % 4 == 0 ? (x >> 6) % copy.size() : copy.size();
      copy.resize(cut);
      auto h = parse(copy);
      if (!h.is_ok()) {
        ++errors;
        QVERIFY(!h.status().message().empty());
      }
    }
    QVERIFY(errors > 1000);
  }
};

QTEST_APPLESS_MAIN(TestSafetensors)
#include "test_safetensors.moc"
