#pragma once
// A local server that speaks the Hugging Face Hub's endpoints, started by the tests themselves on
// 127.0.0.1 (a free port): the revision API (?blobs=true), the tree API (paged through Link
// headers), /{repo}/resolve/{rev}/{path} with a 302 to a "CDN" path for LFS files, byte ranges,
// gated repositories (401 without the token), and faults on demand: a connection dropped part
// way through a file, bytes that do not match the listed SHA-256, a malformed listing.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace httplib {
class Server;
}

namespace day0::test {

struct FakeFile {
  std::string path;
  std::string content;
  bool lfs = false;
  std::string served;             // what the server sends instead of `content` (a corrupt file); empty: content
  std::uint64_t listed_size = 0;  // a size to list instead of content.size() (never downloaded); 0: the real one
};

struct FakeRepo {
  std::string id;  // owner/name
  std::string commit = "0123456789abcdef0123456789abcdef01234567";
  std::vector<FakeFile> files;
  bool gated = false;
  std::string raw_listing;       // sent as the revision API's body when set (malformed JSON, unsafe names)
  bool sizes_in_listing = true;  // false: the revision API gives names only, so the tree API is used
};

class FakeHub {
 public:
  FakeHub();
  ~FakeHub();
  FakeHub(const FakeHub&) = delete;
  FakeHub& operator=(const FakeHub&) = delete;

  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void add_repo(FakeRepo repo);
  // Every file of `folder` (sub-folders too), .safetensors as LFS files.
  static FakeRepo repo_from_folder(const std::string& id, const std::filesystem::path& folder);
  // Makes the server send `path` of `repo` with the byte at `offset` changed (its listed hash stays).
  static void corrupt(FakeRepo& repo, const std::string& path, std::size_t offset);

  static constexpr const char* kToken = "hf_test_token_123";

  // Drops the connection after `after_bytes` of a response body of `path`, `times` times.
  void drop(const std::string& path, std::uint64_t after_bytes, int times);
  // The Range headers (or "-") of every request for `path`'s bytes, in order.
  std::vector<std::string> ranges_of(const std::string& path) const;
  // Whether a request to the CDN carried an Authorization header (it must not).
  bool cdn_saw_token() const { return cdn_saw_token_.load(); }
  int listing_requests() const { return listing_requests_.load(); }
  // Slows every body down to about `bytes_per_second` (0: full speed).
  void throttle(std::uint64_t bytes_per_second) { throttle_ = bytes_per_second; }

 private:
  void serve_bytes(const std::string& path, const std::string& bytes, const void* request, void* response);
  const FakeRepo* find(const std::string& id) const;

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mutex_;
  std::map<std::string, FakeRepo> repos_;
  std::map<std::string, std::pair<std::uint64_t, int>> drops_;  // path -> (after bytes, times left)
  std::map<std::string, std::vector<std::string>> ranges_;
  std::atomic<bool> cdn_saw_token_{false};
  std::atomic<int> listing_requests_{0};
  std::atomic<std::uint64_t> throttle_{0};
};

std::string sha256_hex(const std::string& bytes);
std::string git_blob_id(const std::string& bytes);

}  // namespace day0::test
