#pragma once
// The Hugging Face Hub as Day0 reads it: a repository's file list at a revision (with sizes and
// the SHA-256 of large files), small files fetched whole, and file downloads through
// /{repo}/resolve/{rev}/{path}, following the redirect to the CDN. No Qt; HTTP and HTTPS through
// cpp-httplib. The token goes only to the Hub's own origin, never to the CDN a redirect names.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "day0/status.h"

namespace httplib {
class Client;
}

namespace day0::hub {

inline constexpr const char* kDefaultEndpoint = "https://huggingface.co";

struct HubConfig {
  std::string endpoint = kDefaultEndpoint;  // HF_ENDPOINT (a mirror), without a trailing slash
  std::string token;                        // sent as "Authorization: Bearer" to the endpoint only
  bool offline = false;                     // HF_HUB_OFFLINE: every request is refused
};

// HF_ENDPOINT, HF_HUB_OFFLINE (1, true, yes, on) and the token (see read_token).
HubConfig config_from_environment();

// "owner/name", "owner/name@revision", or a pasted https://huggingface.co/owner/name[/tree/rev]
// address. The name follows the Hub's rules (letters, digits, '-', '_', '.'; no "--" or "..").
struct RepoRef {
  std::string repo;
  std::string revision = "main";
  std::string text() const { return revision == "main" ? repo : repo + "@" + revision; }
};
Result<RepoRef> parse_repo_ref(std::string_view text);

struct RemoteFile {
  std::string path;        // as the Hub names it, '/'-separated, checked by is_safe_repo_path
  std::uint64_t size = 0;  // bytes
  std::string sha256;      // of the content, for files stored in LFS (lowercase hex); else empty
  std::string git_oid;     // the git blob id (SHA-1 of "blob <size>\0" + content); may be empty
};

struct RepoListing {
  std::string commit;  // the revision resolved to a commit, when the Hub says
  std::vector<RemoteFile> files;
};

// Cancels requests in flight from another thread: stop() shuts their sockets down at once, also
// while they wait for a server that sends nothing.
class RequestStopper {
 public:
  void stop();
  bool stopped() const { return stopped_.load(); }
  void reset() { stopped_ = false; }

 private:
  friend class HubClient;
  void attach(httplib::Client* client);
  void detach(httplib::Client* client);
  std::mutex mutex_;
  std::set<httplib::Client*> clients_;
  std::atomic<bool> stopped_{false};
};

// What a download request learnt before its body arrived.
struct DownloadStart {
  int status = 0;            // 200, or 206 when the range was honoured
  std::uint64_t offset = 0;  // where the body starts in the file
  std::uint64_t total = 0;   // the whole file's size when the server said; 0 otherwise
};

class HubClient {
 public:
  // Checks the endpoint's shape; connects nothing yet.
  static Result<HubClient> create(HubConfig config);

  const HubConfig& config() const { return config_; }

  // The files of `ref` with their sizes and hashes: GET /api/models/{repo}/revision/{rev}?blobs=true,
  // else the tree API (/api/models/{repo}/tree/{rev}?recursive=true, following its pages).
  // Unsafe names (absolute, "..", backslashes) refuse the whole listing.
  Result<RepoListing> list_files(const RepoRef& ref) const;

  // A whole small file (config.json, the index) into memory; at most `max_bytes`.
  Result<std::string> fetch(const RepoRef& ref, const std::string& path, std::size_t max_bytes,
                            RequestStopper* stopper = nullptr) const;

  // Streams `path` from byte `offset` on: `on_start` sees the status and where the body begins
  // (false aborts), then `on_data` each piece (false aborts). A stopped `stopper` ends it with
  // ErrorCode::cancelled; a dropped connection is io_error (the caller resumes it).
  Status download(const RepoRef& ref, const std::string& path, std::uint64_t offset,
                  const std::function<bool(const DownloadStart&)>& on_start,
                  const std::function<bool(const char*, std::size_t)>& on_data, RequestStopper* stopper) const;

  // The URL a file is read from (before redirects), e.g. for messages.
  std::string resolve_url(const RepoRef& ref, const std::string& path) const;

 private:
  HubClient(HubConfig config, std::string origin, std::string base_path)
      : config_(std::move(config)), origin_(std::move(origin)), base_path_(std::move(base_path)) {}
  Result<std::string> get_api(const std::string& path_and_query, std::string* link_header) const;
  // GET `path_and_query` on the endpoint (from byte `offset` on), following redirects; the token
  // goes to the endpoint's origin only.
  Status transfer(const std::string& path_and_query, std::uint64_t offset, const std::string& what,
                  const std::function<bool(const DownloadStart&)>& on_start,
                  const std::function<bool(const char*, std::size_t)>& on_data, RequestStopper* stopper,
                  std::string* link_header) const;

  HubConfig config_;
  std::string origin_;     // scheme://host[:port]
  std::string base_path_;  // a mirror's path prefix, or empty
};

// A file name from the Hub that may become a path under the download folder: relative,
// '/'-separated, no "." or ".." parts, no empty parts, no backslash or control characters.
bool is_safe_repo_path(std::string_view path);

// Percent-encodes everything but unreserved characters (and '/' when keep_slash).
std::string url_encode(std::string_view text, bool keep_slash);

}  // namespace day0::hub
