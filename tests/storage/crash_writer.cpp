// Test helper for test_crash: streams replies into a history database through HistoryStore
// until it is killed. Every fact it reports on stdout (one write(2) per line, atomic on a
// pipe) was committed before it was written:
//   O                      the store is open
//   C <conversation>       a conversation was created
//   U <message> <run> <k>  a user message (crash_user_text(run, k)) was committed
//   B <message> <run> <k>  a reply (crash_reply_text(run, k)) was begun
//   R <message> <bytes>    the reply's first <bytes> bytes were committed
//   F <message>            the reply was finished (complete, whole text)
// usage: storage_crash_writer DB RUN FLUSH_MS
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <thread>

#include "storage/crash_text.h"
#include "storage/history_store.h"

using namespace day0::storage;

namespace {

std::mutex report_mutex;

void report(const std::string& line) {
  std::lock_guard lock(report_mutex);
  const std::string text = line + "\n";
  if (::write(STDOUT_FILENO, text.data(), text.size()) != static_cast<ssize_t>(text.size())) std::_Exit(3);
}

[[noreturn]] void fail(const std::string& what, const StoreError& e) {
  std::fprintf(stderr, "crash writer: %s: %s\n", what.c_str(), e.message.c_str());
  std::_Exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: storage_crash_writer DB RUN FLUSH_MS\n");
    return 2;
  }
  const int run = std::atoi(argv[2]);
  StoreOptions options;
  options.flush_interval = std::chrono::milliseconds(std::atoi(argv[3]));
  options.on_reply_commit = [](const std::vector<ReplyCommit>& commits) {
    for (const auto& c : commits) report("R " + std::to_string(c.message_id) + " " + std::to_string(c.content_bytes));
  };
  HistoryStore store(argv[1], options);
  if (auto opened = store.open_report().get(); !opened) fail("open", opened.error());
  report("O");

  std::mt19937 rng(static_cast<unsigned>(run));
  std::int64_t conversation = 0;
  std::optional<std::int64_t> last;
  for (int k = 0;; ++k) {
    if (k % 3 == 0) {
      auto c = store.create_conversation({"crash run " + std::to_string(run), "", nlohmann::json::object()}).get();
      if (!c) fail("create conversation", c.error());
      conversation = c->id;
      last.reset();
      report("C " + std::to_string(conversation));
    }
    NewMessage m;
    m.conversation_id = conversation;
    m.parent_id = last;
    m.content = day0::test::crash_user_text(run, k);
    auto user = store.add_message(m).get();
    if (!user) fail("add message", user.error());
    report("U " + std::to_string(user->id) + " " + std::to_string(run) + " " + std::to_string(k));
    auto reply = store.begin_reply({conversation, user->id, "crash-writer"}).get();
    if (!reply) fail("begin reply", reply.error());
    report("B " + std::to_string(reply->id) + " " + std::to_string(run) + " " + std::to_string(k));
    const std::string text = day0::test::crash_reply_text(run, k);
    // Appends of 1-8 bytes, cutting multi-byte characters, with short pauses like tokens.
    for (std::size_t at = 0; at < text.size();) {
      const std::size_t n = 1 + rng() % 8;
      store.append_reply(reply->id, std::string_view(text).substr(at, n));
      at += n;
      if (rng() % 2 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 600));
    }
    ReplyEnd end;
    end.stats.completion_tokens = static_cast<std::int64_t>(text.size());
    end.stats.tokens_per_second = 50.0;
    if (auto s = store.finish_reply(reply->id, end).get(); !s) fail("finish reply", s.error());
    report("F " + std::to_string(reply->id));
    last = reply->id;
  }
}
