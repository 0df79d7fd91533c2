// SHA-256, base64, UUIDs and UTF-8 checks, against published vectors and Qt's own codecs.
#include <QCryptographicHash>
#include <QStringDecoder>
#include <QtTest>
#include <random>
#include <set>

#include "storage/codec.h"

using namespace day0::storage;

namespace {

std::string random_bytes(std::mt19937& rng, std::size_t n) {
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

QByteArray qbytes(const std::string& s) { return QByteArray(s.data(), static_cast<qsizetype>(s.size())); }

}  // namespace

class TestCodec : public QObject {
  Q_OBJECT
 private slots:
  void sha256Vectors() {
    // FIPS 180-2 examples.
    QCOMPARE(sha256_hex(""), std::string("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    QCOMPARE(sha256_hex("abc"), std::string("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    QCOMPARE(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
             std::string("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
    std::mt19937 rng(1);
    for (int i = 0; i < 50; ++i) {
      const auto bytes = random_bytes(rng, rng() % 5000);
      const auto expected = QCryptographicHash::hash(qbytes(bytes), QCryptographicHash::Sha256).toHex().toStdString();
      QCOMPARE(sha256_hex(bytes), expected);
      QVERIFY(is_sha256_hex(expected));
    }
    QVERIFY(!is_sha256_hex("E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855"));  // uppercase
    QVERIFY(!is_sha256_hex("e3b0"));
  }

  void base64Vectors() {
    // RFC 4648 section 10.
    const std::pair<const char*, const char*> vectors[] = {{"", ""},
                                                           {"f", "Zg=="},
                                                           {"fo", "Zm8="},
                                                           {"foo", "Zm9v"},
                                                           {"foob", "Zm9vYg=="},
                                                           {"fooba", "Zm9vYmE="},
                                                           {"foobar", "Zm9vYmFy"}};
    for (const auto& [plain, encoded] : vectors) {
      QCOMPARE(base64_encode(plain), std::string(encoded));
      QCOMPARE(base64_decode(encoded).value(), std::string(plain));
    }
    std::mt19937 rng(2);
    for (int i = 0; i < 200; ++i) {
      const auto bytes = random_bytes(rng, rng() % 300);
      const auto encoded = base64_encode(bytes);
      QCOMPARE(encoded, qbytes(bytes).toBase64().toStdString());
      QCOMPARE(base64_decode(encoded).value(), bytes);
    }
  }

  void base64IsStrict() {
    for (const char* bad :
         {"Zg=", "Zh==", "Zm9=", "Z===", "Zg==Zg==", "Zm9v\n", "Zm-v", "Zm_v", " Zm9v", "Zm9v====", "=Zm9", "Zg=a"})
      QVERIFY2(!base64_decode(bad).has_value(), bad);
  }

  void uuids() {
    std::set<std::string> seen;
    const QRegularExpression v4("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");
    for (int i = 0; i < 1000; ++i) {
      const auto u = new_uuid();
      QVERIFY2(v4.match(QString::fromStdString(u)).hasMatch(), u.c_str());
      QVERIFY(is_uuid(u));
      QVERIFY(seen.insert(u).second);
    }
    QVERIFY(!is_uuid("00000000-0000-4000-8000-00000000000"));
    QVERIFY(!is_uuid("00000000-0000-4000-8000-00000000000G"));
    QVERIFY(!is_uuid("00000000-0000-4000-8000-00000000000A"));  // uppercase is not the canonical form
    QVERIFY(!is_uuid("000000000-000-4000-8000-000000000000"));
  }

  void utf8() {
    for (const char* good :
         {"", "plain", "h\xc3\xa9llo", "\xe6\x9d\xb1\xe4\xba\xac", "\xf0\x9f\x98\x80", "\xef\xbf\xbf"})
      QVERIFY2(is_valid_utf8(good), good);
    for (const char* bad : {"\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe6\x9d", "\x80", "\xff",
                            "a\xc3", "\xf8\x88\x80\x80\x80"})
      QVERIFY2(!is_valid_utf8(bad), bad);
    QCOMPARE(to_valid_utf8("a\xff"
                           "b"),
             std::string("a\xef\xbf\xbd"
                         "b"));
    QCOMPARE(to_valid_utf8("\xe6\x9d"), std::string("\xef\xbf\xbd\xef\xbf\xbd"));
    QCOMPARE(to_valid_utf8("ok \xe6\x9d\xb1"), std::string("ok \xe6\x9d\xb1"));

    QCOMPARE(utf8_complete_prefix("ab"), std::size_t{2});
    QCOMPARE(utf8_complete_prefix("ab\xe6\x9d"), std::size_t{2});
    QCOMPARE(utf8_complete_prefix("ab\xe6\x9d\xb1"), std::size_t{5});
    QCOMPARE(utf8_complete_prefix("a\xf0\x9f\x98"), std::size_t{1});
    QCOMPARE(utf8_complete_prefix("a\xf0"), std::size_t{1});
    QCOMPARE(utf8_complete_prefix(""), std::size_t{0});

    // Random byte strings: valid exactly when Qt's strict decoder sees no error.
    std::mt19937 rng(3);
    const unsigned char pieces[] = {0x41, 0x80, 0xbf, 0xc2, 0xc0, 0xe0, 0xed, 0xe6, 0xf0, 0xf4, 0xf5, 0x9f, 0xa0, 0x90};
    int valid = 0;
    for (int i = 0; i < 20000; ++i) {
      std::string s;
      for (std::size_t n = rng() % 7; n > 0; --n) s += static_cast<char>(pieces[rng() % sizeof pieces]);
      QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
      const QString decoded = decoder.decode(qbytes(s));
      const bool qt_valid = !decoder.hasError();
      QVERIFY2(is_valid_utf8(s) == qt_valid, qPrintable(qbytes(s).toHex()));
      QVERIFY(is_valid_utf8(to_valid_utf8(s)));
      valid += qt_valid;
      Q_UNUSED(decoded);
    }
    QVERIFY(valid > 100);  // the generator produced both kinds
  }
};

QTEST_APPLESS_MAIN(TestCodec)
#include "test_codec.moc"
