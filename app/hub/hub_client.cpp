#include "hub/hub_client.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "day0/version.h"
#include "hub/hub_token.h"

namespace day0::hub {
namespace {

using json = nlohmann::json;

constexpr int kMaxRedirects = 8;
constexpr std::size_t kMaxListingBytes = 64u << 20;  // a listing of ~100k files
constexpr std::size_t kMaxErrorBody = 4096;
constexpr std::uint64_t kMaxFileSize = 1ull << 50;  // 1 PiB: more is a malformed listing

struct Origin {
  std::string origin;  // scheme://host[:port]
  std::string path;    // the rest, starting with '/' (or empty)
};

Result<Origin> split_url(const std::string& url) {
  const std::size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos)
    return error(ErrorCode::invalid_argument, "'" + url + "' is not a URL (expected https://host or http://host:port)");
  const std::string scheme = url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https")
    return error(ErrorCode::invalid_argument, "'" + url + "' must start with http:// or https://");
  const std::size_t path_start = url.find('/', scheme_end + 3);
  Origin o{url.substr(0, path_start), path_start == std::string::npos ? "" : url.substr(path_start)};
  if (o.origin.size() <= scheme_end + 3) return error(ErrorCode::invalid_argument, "'" + url + "' names no host");
  return o;
}

std::unique_ptr<httplib::Client> make_client(const std::string& origin, int read_timeout) {
  auto client = std::make_unique<httplib::Client>(origin);
  client->set_connection_timeout(15);
  client->set_read_timeout(read_timeout);
  client->set_write_timeout(30);
  client->set_follow_location(false);  // redirects are followed here, so the token stays with the Hub
  client->set_keep_alive(false);
  return client;
}

bool truthy(const char* v) {
  if (v == nullptr) return false;
  std::string s(v);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s == "1" || s == "true" || s == "yes" || s == "on";
}

// Collects a response body into *out, up to `limit` bytes; past it *too_large is set and the
// transfer stops.
struct BodyCollector {
  std::string* out;
  std::size_t limit;
  bool* too_large;
  bool operator()(const char* data, std::size_t n) const {
    if (out->size() + n > limit) {
      *too_large = true;
      return false;
    }
    out->append(data, n);
    return true;
  }
};

bool is_redirect(int status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

// The Hub's own words ({"error": "..."}) or the start of the body.
std::string body_message(const std::string& body) {
  const json j = json::parse(body, nullptr, false);
  if (!j.is_discarded() && j.is_object() && j.contains("error") && j["error"].is_string())
    return j["error"].get<std::string>();
  std::string text = body.substr(0, 300);
  std::replace_if(
      text.begin(), text.end(), [](unsigned char c) { return c < 0x20; }, ' ');
  return text;
}

Status status_error(int status, const std::string& what, const std::string& body, bool has_token) {
  const std::string said = body_message(body);
  const std::string tail = said.empty() ? "" : " (" + said + ")";
  if (status == 401 || status == 403) {
    if (!has_token)
      return error(ErrorCode::invalid_argument,
                   what + " needs a Hugging Face token (HTTP " + std::to_string(status) + tail +
                       "): the repository is gated or private. Accept its terms on the Hub, then set HF_TOKEN, run "
                       "'day0-cli pull --save-token', or give the token in the app's Settings.");
    return error(ErrorCode::invalid_argument, what + " refused the token (HTTP " + std::to_string(status) + tail +
                                                  "): check that it is valid and that you accepted the repository's "
                                                  "terms on the Hub.");
  }
  if (status == 404)
    return error(ErrorCode::not_found,
                 what + " was not found (HTTP 404" + tail + "): check the repository's name and revision.");
  return error(ErrorCode::io_error, what + " answered HTTP " + std::to_string(status) + tail);
}

bool is_hex(const std::string& s, std::size_t length) {
  return s.size() == length && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isxdigit(c); });
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// One file of a listing, from the revision API's siblings ({rfilename, size, blobId, lfs}) or the
// tree API's entries ({type, path, size, oid, lfs: {oid, size}}).
Result<RemoteFile> read_entry(const json& e, const char* name_key, const char* oid_key, const char* lfs_sha_key) {
  if (!e.is_object() || !e.contains(name_key) || !e[name_key].is_string())
    return error(ErrorCode::corrupt_data, std::string("an entry of the file list has no '") + name_key + "'");
  RemoteFile f;
  f.path = e[name_key].get<std::string>();
  if (!is_safe_repo_path(f.path))
    return error(ErrorCode::corrupt_data, "the Hub listed the file name '" + f.path.substr(0, 200) +
                                              "', which would leave the download folder; refusing the listing");
  const json* size = e.contains("size") ? &e["size"] : nullptr;
  const json* lfs = e.contains("lfs") && e["lfs"].is_object() ? &e["lfs"] : nullptr;
  if (lfs && lfs->contains("size")) size = &(*lfs)["size"];
  if (size == nullptr || !size->is_number_unsigned())
    return error(ErrorCode::corrupt_data, "the file list gives no size for " + f.path);
  f.size = size->get<std::uint64_t>();
  if (f.size > kMaxFileSize)
    return error(ErrorCode::corrupt_data, "the file list says " + f.path + " holds " + std::to_string(f.size) +
                                              " bytes, more than any model file; refusing the listing");
  if (lfs) {
    if (!lfs->contains(lfs_sha_key) || !(*lfs)[lfs_sha_key].is_string() ||
        !is_hex((*lfs)[lfs_sha_key].get<std::string>(), 64))
      return error(ErrorCode::corrupt_data, "the file list gives no valid SHA-256 for " + f.path);
    f.sha256 = lower((*lfs)[lfs_sha_key].get<std::string>());
  }
  if (e.contains(oid_key) && e[oid_key].is_string() && is_hex(e[oid_key].get<std::string>(), 40))
    f.git_oid = lower(e[oid_key].get<std::string>());
  return f;
}

// The URL in a Link header's rel="next", or empty.
std::string next_link(const std::string& link) {
  const std::size_t rel = link.find("rel=\"next\"");
  if (rel == std::string::npos) return {};
  const std::size_t open = link.rfind('<', rel);
  const std::size_t close = link.find('>', open);
  if (open == std::string::npos || close == std::string::npos || close > rel) return {};
  return link.substr(open + 1, close - open - 1);
}

}  // namespace

HubConfig config_from_environment() {
  HubConfig config;
  if (const char* endpoint = std::getenv("HF_ENDPOINT"); endpoint && *endpoint) config.endpoint = endpoint;
  while (!config.endpoint.empty() && config.endpoint.back() == '/') config.endpoint.pop_back();
  config.offline = truthy(std::getenv("HF_HUB_OFFLINE"));
  config.token = read_token();
  return config;
}

namespace {
bool valid_name_part(std::string_view s) {
  if (s.empty() || s.size() > 96) return false;
  if (s.find("--") != std::string_view::npos || s.find("..") != std::string_view::npos) return false;
  if (s.front() == '-' || s.front() == '.' || s.back() == '-' || s.back() == '.') return false;
  return std::all_of(s.begin(), s.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '_' || c == '.'; });
}

// "refs%2Fpr%2F1" -> "refs/pr/1" (a revision in a pasted address)
std::string percent_decode(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}
}  // namespace

Result<RepoRef> parse_repo_ref(std::string_view input) {
  std::string text(input);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.erase(text.begin());
  RepoRef ref;
  // A pasted page address: https://huggingface.co/owner/name[/tree/rev]
  if (const std::size_t scheme = text.find("://"); scheme != std::string::npos) {
    const std::size_t path = text.find('/', scheme + 3);
    text = path == std::string::npos ? "" : text.substr(path + 1);
    if (const std::size_t tree = text.find("/tree/"); tree != std::string::npos) {
      ref.revision = percent_decode(text.substr(tree + 6));
      text.resize(tree);
    }
    while (!text.empty() && text.back() == '/') text.pop_back();
  }
  if (const std::size_t at = text.find('@'); at != std::string::npos) {
    ref.revision = text.substr(at + 1);
    text.resize(at);
  }
  if (text.rfind("models/", 0) == 0) text.erase(0, 7);
  const std::size_t slash = text.find('/');
  const bool ok = slash == std::string::npos ? valid_name_part(text)
                                             : valid_name_part(std::string_view(text).substr(0, slash)) &&
                                                   valid_name_part(std::string_view(text).substr(slash + 1));
  if (!ok)
    return error(ErrorCode::invalid_argument,
                 "'" + std::string(input.substr(0, 200)) +
                     "' is not a Hugging Face repository: give it as owner/name (e.g. openai/gpt-oss-20b), "
                     "optionally @revision");
  const bool revision_ok =
      !ref.revision.empty() && ref.revision.size() <= 256 &&
      std::none_of(ref.revision.begin(), ref.revision.end(),
                   [](unsigned char c) { return c < 0x21 || c == 0x7f || c == '\\' || c == '?' || c == '#'; }) &&
      ref.revision.find("..") == std::string::npos;
  if (!revision_ok)
    return error(ErrorCode::invalid_argument,
                 "'" + ref.revision.substr(0, 200) + "' is not a revision: give a branch, a tag or a commit");
  ref.repo = text;
  return ref;
}

bool is_safe_repo_path(std::string_view path) {
  if (path.empty() || path.size() > 1024 || path.front() == '/') return false;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    const std::string_view part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return std::none_of(path.begin(), path.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f || c == '\\'; });
}

std::string url_encode(std::string_view text, bool keep_slash) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (const unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/')) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

void RequestStopper::stop() {
  stopped_ = true;
  std::lock_guard lock(mutex_);
  for (auto* c : clients_) c->stop();
}

void RequestStopper::attach(httplib::Client* client) {
  std::lock_guard lock(mutex_);
  clients_.insert(client);
}

void RequestStopper::detach(httplib::Client* client) {
  std::lock_guard lock(mutex_);
  clients_.erase(client);
}

Result<HubClient> HubClient::create(HubConfig config) {
  while (!config.endpoint.empty() && config.endpoint.back() == '/') config.endpoint.pop_back();
  DAY0_ASSIGN_OR_RETURN(const Origin o, split_url(config.endpoint));
  return HubClient(std::move(config), o.origin, o.path);
}

std::string HubClient::resolve_url(const RepoRef& ref, const std::string& path) const {
  return config_.endpoint + "/" + ref.repo + "/resolve/" + url_encode(ref.revision, false) + "/" +
         url_encode(path, true);
}

namespace {
Status offline_refusal(const std::string& what) {
  return error(ErrorCode::unsupported, "offline mode (HF_HUB_OFFLINE) is on: " + what +
                                           " would need the network. Unset HF_HUB_OFFLINE to download.");
}
}  // namespace

Result<std::string> HubClient::get_api(const std::string& path_and_query, std::string* link_header) const {
  std::string body;
  bool too_large = false;
  const Status s = transfer(
      path_and_query, 0, config_.endpoint + path_and_query.substr(0, path_and_query.find('?')),
      [](const DownloadStart&) { return true; }, BodyCollector{&body, kMaxListingBytes, &too_large}, nullptr,
      link_header);
  if (too_large) return error(ErrorCode::corrupt_data, config_.endpoint + " sent a file list larger than 64 MiB");
  if (!s) return s;
  return body;
}

Status HubClient::download(const RepoRef& ref, const std::string& path, std::uint64_t offset,
                           const std::function<bool(const DownloadStart&)>& on_start,
                           const std::function<bool(const char*, std::size_t)>& on_data,
                           RequestStopper* stopper) const {
  if (!is_safe_repo_path(path))
    return error(ErrorCode::invalid_argument, "'" + path + "' is not a file of a repository");
  const std::string target =
      "/" + ref.repo + "/resolve/" + url_encode(ref.revision, false) + "/" + url_encode(path, true);
  return transfer(target, offset, ref.repo + "/" + path, on_start, on_data, stopper, nullptr);
}

Status HubClient::transfer(const std::string& path_and_query, std::uint64_t offset, const std::string& what,
                           const std::function<bool(const DownloadStart&)>& on_start,
                           const std::function<bool(const char*, std::size_t)>& on_data, RequestStopper* stopper,
                           std::string* link_header) const {
  if (config_.offline) return offline_refusal("reading " + what);
  std::string origin = origin_;
  std::string target = base_path_ + path_and_query;
  static const std::string user_agent = "day0/" + build_info().version;
  for (int hop = 0; hop <= kMaxRedirects; ++hop) {
    auto client = make_client(origin, 60);
    const bool to_hub = origin == origin_;
    httplib::Headers headers{{"User-Agent", user_agent}, {"Accept-Encoding", "identity"}};
    if (to_hub && !config_.token.empty()) headers.emplace("Authorization", "Bearer " + config_.token);
    if (offset > 0) headers.emplace("Range", "bytes=" + std::to_string(offset) + "-");
    int status = 0;
    std::string location, error_body;
    bool started = false, caller_stopped = false, bad_range = false;
    if (stopper) {
      stopper->attach(client.get());
      if (stopper->stopped()) {
        stopper->detach(client.get());
        return error(ErrorCode::cancelled, "stopped");
      }
    }
    const auto res = client->Get(
        target, headers,
        [&](const httplib::Response& r) {
          status = r.status;
          if (is_redirect(status)) {
            location = r.get_header_value("Location");
            return true;
          }
          if (status != 200 && status != 206) return true;  // the error body is read for the message
          DownloadStart start{status, 0, 0};
          if (status == 206) {
            // "bytes first-last/total"
            const std::string range = r.get_header_value("Content-Range");
            unsigned long long first = 0, last = 0, total = 0;
            if (std::sscanf(range.c_str(), "bytes %llu-%llu/%llu", &first, &last, &total) != 3 || first != offset) {
              bad_range = true;
              return false;
            }
            start.offset = first;
            start.total = total;
          } else if (r.has_header("Content-Length")) {
            start.total = std::strtoull(r.get_header_value("Content-Length").c_str(), nullptr, 10);
          }
          if (link_header) *link_header = r.get_header_value("Link");
          started = true;
          if (!on_start(start)) caller_stopped = true;
          return !caller_stopped;
        },
        [&](const char* data, std::size_t n) {
          if (started) {
            if (!on_data(data, n)) caller_stopped = true;
            return !caller_stopped;
          }
          error_body.append(data, std::min(n, kMaxErrorBody - std::min(kMaxErrorBody, error_body.size())));
          return true;
        });
    if (stopper) stopper->detach(client.get());
    if (stopper && stopper->stopped()) return error(ErrorCode::cancelled, "stopped");
    if (bad_range) return error(ErrorCode::io_error, what + ": the server answered a different byte range than asked");
    if (caller_stopped) return error(ErrorCode::cancelled, "stopped");
    if (!res)
      return error(ErrorCode::io_error,
                   what + ": the connection to " + origin + " failed (" + httplib::to_string(res.error()) + ")");
    if (is_redirect(status)) {
      if (location.empty()) return error(ErrorCode::io_error, what + ": a redirect without a Location");
      if (location.rfind("http://", 0) == 0 || location.rfind("https://", 0) == 0) {
        DAY0_ASSIGN_OR_RETURN(const Origin next, split_url(location));
        origin = next.origin;
        target = next.path.empty() ? "/" : next.path;
      } else if (location.front() == '/') {
        target = location;
      } else {
        target = target.substr(0, target.rfind('/', target.find('?')) + 1) + location;
      }
      continue;
    }
    if (status == 200 || status == 206) return Status::ok();
    if (!to_hub) return error(ErrorCode::io_error, what + ": " + origin + " answered HTTP " + std::to_string(status));
    return status_error(status, what, error_body, !config_.token.empty());
  }
  return error(ErrorCode::io_error, what + ": more than " + std::to_string(kMaxRedirects) + " redirects");
}

Result<RepoListing> HubClient::list_files(const RepoRef& ref) const {
  if (config_.offline) return offline_refusal("listing " + ref.text());
  const std::string repo_path = "/api/models/" + ref.repo;
  const std::string rev = url_encode(ref.revision, false);
  const std::string what = config_.endpoint + repo_path + "/revision/" + rev;
  std::string link;
  auto body = get_api(repo_path + "/revision/" + rev + "?blobs=true", &link);
  if (!body) return body.status().with_context(ref.text());
  RepoListing listing;
  const json j = json::parse(*body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("siblings") || !j["siblings"].is_array())
    return error(ErrorCode::corrupt_data, what + " did not answer with a file list (malformed JSON)");
  if (j.contains("sha") && j["sha"].is_string() && is_hex(j["sha"].get<std::string>(), 40))
    listing.commit = j["sha"].get<std::string>();
  bool sizes = true;
  for (const auto& s : j["siblings"])
    if (!s.is_object() || (!s.contains("size") && !(s.contains("lfs") && s["lfs"].is_object()))) sizes = false;
  if (sizes) {
    for (const auto& s : j["siblings"]) {
      DAY0_ASSIGN_OR_RETURN(RemoteFile f, read_entry(s, "rfilename", "blobId", "sha256"));
      listing.files.push_back(std::move(f));
    }
    return listing;
  }
  // Without sizes (some mirrors): the tree API, page by page, at the resolved commit.
  std::string next = repo_path + "/tree/" + url_encode(listing.commit.empty() ? ref.revision : listing.commit, false) +
                     "?recursive=true&expand=false";
  for (int page = 0; !next.empty(); ++page) {
    if (page > 1000) return error(ErrorCode::corrupt_data, what + ": the tree listing never ends");
    std::string page_link;
    DAY0_ASSIGN_OR_RETURN(const std::string tree_body, get_api(next, &page_link));
    const json t = json::parse(tree_body, nullptr, false);
    if (t.is_discarded() || !t.is_array())
      return error(ErrorCode::corrupt_data, config_.endpoint + repo_path + "/tree did not answer with a file list");
    for (const auto& e : t) {
      if (!e.is_object() || !e.contains("type") || e["type"] != "file") continue;
      DAY0_ASSIGN_OR_RETURN(RemoteFile f, read_entry(e, "path", "oid", "oid"));
      listing.files.push_back(std::move(f));
    }
    next = next_link(page_link);
    if (next.rfind(origin_, 0) == 0) next = next.substr(origin_.size() + base_path_.size());
  }
  return listing;
}

Result<std::string> HubClient::fetch(const RepoRef& ref, const std::string& path, std::size_t max_bytes,
                                     RequestStopper* stopper) const {
  std::string body;
  bool too_large = false;
  const Status s = download(
      ref, path, 0, [](const DownloadStart&) { return true; }, BodyCollector{&body, max_bytes, &too_large}, stopper);
  if (too_large)
    return error(ErrorCode::corrupt_data, path + " is larger than " + std::to_string(max_bytes) + " bytes");
  if (!s) return s;
  return body;
}

}  // namespace day0::hub
