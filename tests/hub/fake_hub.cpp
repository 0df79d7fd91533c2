#include "hub/fake_hub.h"

#include "hub/digest.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace day0::test {
namespace {

using json = nlohmann::json;

std::string hex_digest(hub::Digest::Kind kind, const std::string& bytes) {
  hub::Digest d(kind);
  d.update(bytes.data(), bytes.size());
  return d.hex();
}

void repository_not_found(httplib::Response& res) {
  res.status = 404;
  res.set_content(R"({"error":"Repository not found"})", "application/json");
}

std::uint64_t listed_size(const FakeFile& f) { return f.listed_size ? f.listed_size : f.content.size(); }

json sibling(const FakeFile& f) {
  json s = {{"rfilename", f.path}, {"size", listed_size(f)}, {"blobId", git_blob_id(f.content)}};
  if (f.lfs) s["lfs"] = {{"sha256", sha256_hex(f.content)}, {"size", listed_size(f)}, {"pointerSize", 134}};
  return s;
}

json tree_entry(const FakeFile& f) {
  json e = {{"type", "file"}, {"path", f.path}, {"size", listed_size(f)}, {"oid", git_blob_id(f.content)}};
  if (f.lfs) e["lfs"] = {{"oid", sha256_hex(f.content)}, {"size", listed_size(f)}, {"pointerSize", 134}};
  return e;
}

}  // namespace

std::string sha256_hex(const std::string& bytes) { return hex_digest(hub::Digest::Kind::sha256, bytes); }
std::string git_blob_id(const std::string& bytes) {
  return hex_digest(hub::Digest::Kind::sha1, "blob " + std::to_string(bytes.size()) + std::string(1, '\0') + bytes);
}

void FakeHub::corrupt(FakeRepo& repo, const std::string& path, std::size_t offset) {
  for (auto& f : repo.files)
    if (f.path == path) {
      f.served = f.content;
      f.served[offset] ^= 0x40;
    }
}

FakeRepo FakeHub::repo_from_folder(const std::string& id, const std::filesystem::path& folder) {
  FakeRepo repo;
  repo.id = id;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(folder)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    FakeFile f;
    f.path = std::filesystem::relative(entry.path(), folder).generic_string();
    f.content = bytes.str();
    f.lfs = entry.path().extension() == ".safetensors";
    repo.files.push_back(std::move(f));
  }
  std::sort(repo.files.begin(), repo.files.end(), [](const FakeFile& a, const FakeFile& b) { return a.path < b.path; });
  return repo;
}

const FakeRepo* FakeHub::find(const std::string& id) const {
  const auto it = repos_.find(id);
  return it == repos_.end() ? nullptr : &it->second;
}

void FakeHub::add_repo(FakeRepo repo) {
  std::lock_guard lock(mutex_);
  repos_[repo.id] = std::move(repo);
}

void FakeHub::drop(const std::string& path, std::uint64_t after_bytes, int times) {
  std::lock_guard lock(mutex_);
  drops_[path] = {after_bytes, times};
}

std::vector<std::string> FakeHub::ranges_of(const std::string& path) const {
  std::lock_guard lock(mutex_);
  const auto it = ranges_.find(path);
  return it == ranges_.end() ? std::vector<std::string>{} : it->second;
}

void FakeHub::serve_bytes(const std::string& path, const std::string& bytes, const void* request, void* response) {
  const auto& req = *static_cast<const httplib::Request*>(request);
  auto& res = *static_cast<httplib::Response*>(response);
  std::uint64_t drop_after = ~std::uint64_t{0};
  {
    std::lock_guard lock(mutex_);
    ranges_[path].push_back(req.has_header("Range") ? req.get_header_value("Range") : "-");
    if (auto it = drops_.find(path); it != drops_.end() && it->second.second > 0) {
      drop_after = it->second.first;
      --it->second.second;
    }
  }
  auto data = std::make_shared<std::string>(bytes);
  auto sent = std::make_shared<std::uint64_t>(0);
  const std::uint64_t rate = throttle_.load();
  res.set_header("X-Repo-Commit", "0123456789abcdef0123456789abcdef01234567");
  res.set_content_provider(
      data->size(), "application/octet-stream",
      [data, sent, drop_after, rate](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
        const std::size_t piece = std::min<std::size_t>(length, 16384);
        std::size_t n = piece;
        if (*sent + n > drop_after) n = static_cast<std::size_t>(drop_after - *sent);
        if (n > 0 && !sink.write(data->data() + offset, n)) return false;
        *sent += n;
        if (*sent >= drop_after) return false;  // the connection goes down mid-file
        if (rate > 0) std::this_thread::sleep_for(std::chrono::microseconds(n * 1'000'000 / rate));
        return true;
      });
}

FakeHub::FakeHub() : server_(std::make_unique<httplib::Server>()) {
  auto& s = *server_;
  s.Get(R"(/api/models/([^/]+)/([^/]+)/revision/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
    ++listing_requests_;
    std::lock_guard lock(mutex_);
    const FakeRepo* repo = find(req.matches[1].str() + "/" + req.matches[2].str());
    if (repo == nullptr) return repository_not_found(res);
    if (!repo->raw_listing.empty()) {
      res.set_content(repo->raw_listing, "application/json");
      return;
    }
    json j = {{"id", repo->id}, {"sha", repo->commit}, {"siblings", json::array()}};
    for (const auto& f : repo->files)
      j["siblings"].push_back(repo->sizes_in_listing && req.has_param("blobs") ? sibling(f)
                                                                               : json{{"rfilename", f.path}});
    res.set_content(j.dump(), "application/json");
  });
  s.Get(R"(/api/models/([^/]+)/([^/]+)/tree/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
    ++listing_requests_;
    std::lock_guard lock(mutex_);
    const std::string id = req.matches[1].str() + "/" + req.matches[2].str();
    const FakeRepo* repo = find(id);
    if (repo == nullptr) return repository_not_found(res);
    // Pages of three entries, a folder entry among them, as the Hub pages long listings.
    const std::size_t cursor = req.has_param("cursor") ? std::stoul(req.get_param_value("cursor")) : 0;
    json page = json::array();
    if (cursor == 0) page.push_back({{"type", "directory"}, {"path", "original"}, {"oid", git_blob_id("")}});
    for (std::size_t i = cursor; i < repo->files.size() && i < cursor + 3; ++i)
      page.push_back(tree_entry(repo->files[i]));
    if (cursor + 3 < repo->files.size())
      res.set_header("Link", "<" + endpoint() + "/api/models/" + id + "/tree/" + req.matches[3].str() +
                                 "?recursive=true&cursor=" + std::to_string(cursor + 3) + ">; rel=\"next\"");
    res.set_content(page.dump(), "application/json");
  });
  // The "CDN": another host name for the same server (so the token must not come along), the
  // file named by its repository and path and checked against its SHA-256.
  s.Get(R"(/cdn/([0-9a-f]{64}))", [this](const httplib::Request& req, httplib::Response& res) {
    if (req.has_header("Authorization")) cdn_saw_token_ = true;
    const std::string path = req.get_param_value("file");
    std::string bytes;
    bool found = false;
    {
      std::lock_guard lock(mutex_);
      if (const FakeRepo* repo = find(req.get_param_value("repo")))
        for (const auto& f : repo->files)
          if (f.lfs && f.path == path && sha256_hex(f.content) == req.matches[1].str()) {
            bytes = f.served.empty() ? f.content : f.served;
            found = true;
          }
    }
    if (!found) {
      res.status = 404;
      return;
    }
    serve_bytes(path, bytes, &req, &res);
  });
  s.Get(R"(/([^/]+)/([^/]+)/resolve/([^/]+)/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
    std::string bytes, sha, id;
    const std::string path = req.matches[4].str();
    {
      std::lock_guard lock(mutex_);
      const FakeRepo* repo = find(req.matches[1].str() + "/" + req.matches[2].str());
      if (repo == nullptr) return repository_not_found(res);
      if (repo->gated && req.get_header_value("Authorization") != std::string("Bearer ") + kToken) {
        res.status = 401;
        res.set_content(
            R"({"error":"Access to model )" + repo->id +
                R"( is restricted. You must have access to it and be authenticated to access it. Please log in."})",
            "application/json");
        return;
      }
      const FakeFile* file = nullptr;
      for (const auto& f : repo->files)
        if (f.path == path) file = &f;
      if (file == nullptr) {
        res.status = 404;
        res.set_content(R"({"error":"Entry not found"})", "application/json");
        return;
      }
      if (file->lfs) {
        sha = sha256_hex(file->content);
        id = repo->id;
        res.set_header("X-Linked-Size", std::to_string(file->content.size()));
        res.set_header("X-Linked-Etag", "\"" + sha + "\"");
      } else {
        bytes = file->served.empty() ? file->content : file->served;
      }
    }
    if (!sha.empty()) {
      res.status = 302;
      res.set_header("Location", "http://localhost:" + std::to_string(port_) + "/cdn/" + sha +
                                     "?repo=" + httplib::detail::encode_query_param(id) +
                                     "&file=" + httplib::detail::encode_query_param(path) + "&Expires=1&Signature=abc");
      return;
    }
    serve_bytes(path, bytes, &req, &res);
  });
  port_ = s.bind_to_any_port("127.0.0.1");
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

FakeHub::~FakeHub() {
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace day0::test
