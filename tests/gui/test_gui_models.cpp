// The app's view-models and helpers without the engine: the branch tree of a conversation,
// the conversation list, Markdown splitting, and image validation (including hostile files).
#include <QAbstractItemModelTester>
#include <QBuffer>
#include <QCryptographicHash>
#include <QImage>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QtTest>

#include "gui/conversation_list_model.h"
#include "gui/image_attachments.h"
#include "gui/markdown_blocks.h"
#include "gui/message_blocks.h"
#include "gui/message_list_model.h"

using namespace day0::app;
using day0::storage::Message;
using day0::storage::Role;

namespace {

Message msg(std::int64_t id, std::optional<std::int64_t> parent, Role role, const std::string& text) {
  Message m;
  m.id = id;
  m.conversation_id = 1;
  m.parent_id = parent;
  m.role = role;
  m.content = text;
  return m;
}

QList<qint64> rowIds(const MessageListModel& model) {
  QList<qint64> ids;
  for (int r = 0; r < model.rowCount(); ++r)
    ids << model.data(model.index(r), MessageListModel::MessageIdRole).toLongLong();
  return ids;
}

QByteArray encode(const QImage& image, const char* format) {
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  image.save(&buffer, format);
  return bytes;
}

QImage sampleImage(int w, int h) {
  QImage image(w, h, QImage::Format_RGB32);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) image.setPixel(x, y, qRgb(x * 255 / w, y * 255 / h, 128));
  return image;
}

// A PNG whose header claims `w` x `h` pixels (with a correct CRC) but holds almost no data.
QByteArray pngClaiming(quint32 w, quint32 h) {
  QByteArray png = encode(sampleImage(4, 4), "PNG");
  // IHDR data starts at byte 16: width, height (big-endian), then 5 bytes; CRC over type+data.
  for (int i = 0; i < 4; ++i) {
    png[16 + i] = static_cast<char>((w >> (24 - 8 * i)) & 0xff);
    png[20 + i] = static_cast<char>((h >> (24 - 8 * i)) & 0xff);
  }
  const quint32 crc = [&]() {
    quint32 c = 0xffffffffu;
    for (int i = 12; i < 12 + 4 + 13; ++i) {
      c ^= static_cast<quint8>(png[i]);
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
    }
    return ~c;
  }();
  for (int i = 0; i < 4; ++i) png[29 + i] = static_cast<char>((crc >> (24 - 8 * i)) & 0xff);
  return png;
}

}  // namespace

class TestGuiModels : public QObject {
  Q_OBJECT
 private slots:
  void markdownSplitsFencedCode() {
    const auto blocks = split_markdown(
        "Intro **bold**\n\n```cpp\nint main() {}\n```\nAfter\n~~~\nraw ``` inside\n~~~\n\n````python\nopen");
    QCOMPARE(blocks.size(), std::size_t(5));
    QCOMPARE(blocks[0].kind, MarkdownBlock::Kind::text);
    QCOMPARE(blocks[0].text, QString("Intro **bold**"));
    QCOMPARE(blocks[1].kind, MarkdownBlock::Kind::code);
    QCOMPARE(blocks[1].language, QString("cpp"));
    QCOMPARE(blocks[1].text, QString("int main() {}"));
    QVERIFY(blocks[1].closed);
    QCOMPARE(blocks[2].text, QString("After"));
    QCOMPARE(blocks[3].text, QString("raw ``` inside"));  // a backtick line does not close a tilde fence
    QCOMPARE(blocks[4].language, QString("python"));
    QCOMPARE(blocks[4].text, QString("open"));
    QVERIFY(!blocks[4].closed);  // still streaming
    // Not fences: two backticks, inline code, and a backtick fence whose info has a backtick.
    const auto prose = split_markdown("``not``\nuse `x`\n```a`b\ntext");
    QCOMPARE(prose.size(), std::size_t(1));
    QCOMPARE(prose[0].kind, MarkdownBlock::Kind::text);
    QVERIFY(split_markdown("").empty());
    QVERIFY(split_markdown("  \n\n ").empty());
  }

  void branchesFollowTheChosenSibling() {
    MessageListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    // system 1 -> user 2 -> replies 3 and 4; user 5 beside 2 (an edit) -> reply 6.
    model.reset({msg(1, std::nullopt, Role::system, "be brief"), msg(2, 1, Role::user, "hi"),
                 msg(3, 2, Role::assistant, "first"), msg(4, 2, Role::assistant, "second"),
                 msg(5, 1, Role::user, "hello"), msg(6, 5, Role::assistant, "third")});
    // The newest sibling at each fork; the system prompt is not a row.
    QCOMPARE(rowIds(model), (QList<qint64>{5, 6}));
    QCOMPARE(model.data(model.index(0), MessageListModel::BranchCountRole).toInt(), 2);
    QCOMPARE(model.data(model.index(0), MessageListModel::BranchIndexRole).toInt(), 2);
    QCOMPARE(model.lastId().value(), 6);

    QVERIFY(model.switchBranch(5, -1));
    QCOMPARE(rowIds(model), (QList<qint64>{2, 4}));
    QCOMPARE(model.data(model.index(1), MessageListModel::BranchIndexRole).toInt(), 2);
    QVERIFY(model.switchBranch(4, -1));
    QCOMPARE(rowIds(model), (QList<qint64>{2, 3}));
    QVERIFY(!model.switchBranch(3, -1));  // no sibling before the first
    QVERIFY(!model.switchBranch(99, 1));

    // Context of a reply: from the root, system prompt included.
    const auto chain = model.chainTo(3);
    QCOMPARE(chain.size(), std::size_t(3));
    QCOMPARE(chain[0].content, std::string("be brief"));
    QCOMPARE(chain[2].content, std::string("first"));

    // A regenerated reply is added and shown; its fork now counts three.
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    model.add(msg(7, 2, Role::assistant, ""));
    QCOMPARE(rowIds(model), (QList<qint64>{2, 7}));
    QCOMPARE(model.data(model.index(1), MessageListModel::BranchCountRole).toInt(), 3);
    QCOMPARE(inserted.count(), 1);

    // Streaming text lands in the row and in its Markdown blocks.
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    model.appendText(7, "Some ", "thinking");
    model.appendText(7, "text\n```\ncode", "");
    QCOMPARE(changed.count(), 2);
    QCOMPARE(model.data(model.index(1), MessageListModel::ContentRole).toString(), QString("Some text\n```\ncode"));
    QCOMPARE(model.data(model.index(1), MessageListModel::ReasoningRole).toString(), QString("thinking"));
    auto* blocks =
        qobject_cast<MessageBlocks*>(model.data(model.index(1), MessageListModel::BlocksRole).value<QObject*>());
    QVERIFY(blocks);
    QCOMPARE(blocks, model.blocksOf(7));
    QCOMPARE(blocks->rowCount(), 2);
    QCOMPARE(blocks->data(blocks->index(1), MessageBlocks::KindRole).toString(), QString("code"));
    QCOMPARE(blocks->code(1), QString("code"));

    day0::storage::ReplyStats stats;
    stats.completion_tokens = 12;
    stats.tokens_per_second = 33.5;
    model.finish(7, day0::storage::MessageState::incomplete, {}, stats);
    QCOMPARE(model.data(model.index(1), MessageListModel::StateRole).toString(), QString("incomplete"));
    QCOMPARE(model.data(model.index(1), MessageListModel::StatsRole).toString(), QString("12 tokens · 33.5 tokens/s"));

    // Focus on an older message selects the path through it.
    model.reset(
        {msg(2, std::nullopt, Role::user, "a"), msg(3, 2, Role::assistant, "b"), msg(4, 2, Role::assistant, "c")}, 3);
    QCOMPARE(rowIds(model), (QList<qint64>{2, 3}));
    model.clear();
    QCOMPARE(model.rowCount(), 0);
    QVERIFY(!model.lastId());
  }

  void hostileTreesDoNotHang() {
    MessageListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    // A cycle (2 -> 3 -> 2) and an orphan: the path stops, nothing loops forever.
    model.reset({msg(1, std::nullopt, Role::user, "root"), msg(2, 3, Role::user, "x"), msg(3, 2, Role::assistant, "y"),
                 msg(4, 42, Role::assistant, "orphan")});
    QCOMPARE(rowIds(model), (QList<qint64>{1}));
    QVERIFY(model.chainTo(2).size() <= 4);
  }

  void conversationListSearchAndHide() {
    ConversationListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    day0::storage::Conversation a, b;
    a.id = 1;
    a.title = "Pinned one";
    a.pinned = true;
    a.updated_at = QDateTime::currentMSecsSinceEpoch();
    b.id = 2;
    b.title = "";
    b.updated_at = QDateTime::currentMSecsSinceEpoch() - 30ll * 24 * 3600 * 1000;
    model.setConversations({a, b});
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.data(model.index(0), ConversationListModel::SectionRole).toString(), QString("Pinned"));
    QCOMPARE(model.data(model.index(1), ConversationListModel::SectionRole).toString(), QString("Older"));
    QCOMPARE(model.data(model.index(1), ConversationListModel::TitleRole).toString(), QString("New chat"));
    model.setHidden({1});
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.idAt(0), 2);
    model.setHidden({});

    day0::storage::SearchHit title, hit, second;
    title.conversation_id = 2;
    title.conversation_title = "t";
    hit.conversation_id = 2;
    hit.message_id = 9;
    hit.snippet = "a <tag> & zebra here";
    hit.match_offset = 10;
    hit.match_length = 5;
    second = hit;
    second.message_id = 10;
    model.setSearchHits({title, hit, second});
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.data(model.index(0), ConversationListModel::SnippetRole).toString(),
             QString("a &lt;tag&gt; &amp; <b>zebra</b> here"));
    QCOMPARE(model.data(model.index(0), ConversationListModel::MatchMessageIdRole).toLongLong(), 9);
    // Offsets past the end (a damaged hit) are clamped, not trusted.
    hit.match_offset = 500;
    hit.match_length = 500;
    model.setSearchHits({hit});
    QCOMPARE(model.data(model.index(0), ConversationListModel::SnippetRole).toString(),
             QString("a &lt;tag&gt; &amp; zebra here<b></b>"));
  }

  void validImagesAreAccepted() {
    const QImage image = sampleImage(40, 30);
    for (const char* format : {"PNG", "JPEG", "BMP"}) {
      const QByteArray bytes = encode(image, format);
      const ValidatedImage v = validate_image(bytes, "photo.bin");
      QVERIFY2(v.error.isEmpty(), qPrintable(v.error));
      QCOMPARE(v.size, QSize(40, 30));
      QCOMPARE(v.sha256, QString(QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex()));
    }
    QCOMPARE(validate_image(encode(image, "PNG"), "a.png").mime_type, QString("image/png"));
    QCOMPARE(validate_image(encode(image, "JPEG"), "a.png").mime_type, QString("image/jpeg"));  // bytes, not names
  }

  void hostileImagesAreRefusedWithAReason() {
    const QByteArray png = encode(sampleImage(64, 48), "PNG");
    const auto refused = [](const QByteArray& data, const QString& expect, const ImageLimits& limits = {}) {
      const ValidatedImage v = validate_image(data, "evil.png", limits);
      QVERIFY2(v.error.contains("evil.png") && v.error.contains(expect), qPrintable(v.error));
      QVERIFY(v.data.isEmpty());
    };
    refused({}, "empty");
    refused("not an image at all", "not an image Day0 can read");
    refused("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"/>", "not an image Day0 can read");
    refused(png.left(60), "damaged");
    refused(pngClaiming(100000, 100000), "100000 x 100000 pixels");
    refused(pngClaiming(8000, 8000), "megapixels");
    ImageLimits small;
    small.max_bytes = 100;
    refused(png, "images up to", small);
    small = {};
    small.max_side = 32;
    refused(png, "64 x 48 pixels", small);
  }

  void fuzzedImagesNeverCrash() {
    QRandomGenerator rng(12345);
    const QByteArray seeds[] = {encode(sampleImage(24, 16), "PNG"), encode(sampleImage(24, 16), "JPEG"),
                                encode(sampleImage(24, 16), "BMP"), encode(sampleImage(7, 5), "PNG")};
    int accepted = 0, refusedCount = 0;
    for (int round = 0; round < 400; ++round) {
      QByteArray data = seeds[round % 4];
      const int edits = 1 + rng.bounded(8);
      for (int e = 0; e < edits && !data.isEmpty(); ++e) {
        const int at = rng.bounded(data.size());
        switch (rng.bounded(3)) {
          case 0:
            data[at] = static_cast<char>(rng.bounded(256));
            break;
          case 1:
            data.truncate(at);
            break;
          default:
            data.insert(at, QByteArray(rng.bounded(64), static_cast<char>(rng.bounded(256))));
        }
      }
      const ValidatedImage v = validate_image(data, "fuzz");
      if (v.error.isEmpty()) {
        ++accepted;
        QVERIFY(v.size.width() > 0 && v.size.height() > 0);
      } else {
        ++refusedCount;
      }
    }
    QCOMPARE(accepted + refusedCount, 400);
    QVERIFY(refusedCount > 0);
  }
};

QTEST_GUILESS_MAIN(TestGuiModels)
#include "test_gui_models.moc"
