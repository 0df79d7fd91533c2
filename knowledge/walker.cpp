#include "knowledge/walker.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "knowledge/gitignore.h"
#include "knowledge/text_util.h"

namespace day0::knowledge {

namespace {

constexpr int kMaxDepth = 64;  // deeper folders are reported, not walked
constexpr std::int64_t kMaxGitignoreBytes = 1 << 20;

struct Walker {
  const WalkOptions& options;
  const std::atomic<bool>* cancel;
  WalkResult result;
  GitignoreRules rules;
  std::set<std::pair<dev_t, ino_t>> folders_seen;

  bool cancelled() {
    if (cancel && cancel->load(std::memory_order_relaxed)) result.cancelled = true;
    return result.cancelled;
  }

  void skip(const std::string& relative, std::string reason) {
    result.skipped.push_back({relative, std::move(reason)});
  }

  void read_gitignore(const std::filesystem::path& folder, const std::string& relative) {
    const std::filesystem::path file = folder / ".gitignore";
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= kMaxGitignoreBytes) {
      std::string content(static_cast<std::size_t>(st.st_size), '\0');
      const ssize_t n = ::pread(fd, content.data(), content.size(), 0);
      if (n > 0) {
        content.resize(static_cast<std::size_t>(n));
        rules.add(relative, content);
      }
    }
    ::close(fd);
  }

  void walk(const std::filesystem::path& folder, const std::string& relative, int depth) {
    read_gitignore(folder, relative);
    std::vector<std::string> names;
    if (DIR* dir = ::opendir(folder.c_str())) {
      while (const dirent* e = ::readdir(dir)) {
        const std::string name = e->d_name;
        if (name != "." && name != "..") names.push_back(name);
      }
      ::closedir(dir);
    } else {
      skip(relative.empty() ? "." : relative + "/", std::string("unreadable: ") + std::strerror(errno));
      return;
    }
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
      if (cancelled()) return;
      const std::string child = relative.empty() ? name : relative + "/" + name;
      if (!is_valid_utf8(name)) {
        skip(sanitize_utf8(child), "file name is not valid UTF-8");
        continue;
      }
      const std::filesystem::path path = folder / name;
      struct stat link {};
      if (::lstat(path.c_str(), &link) != 0) {
        skip(child, std::string("unreadable: ") + std::strerror(errno));
        continue;
      }
      struct stat st = link;
      const bool symlink = S_ISLNK(link.st_mode);
      if (symlink) {
        if (!options.follow_symlinks) {
          skip(child, "symbolic link (not followed)");
          continue;
        }
        if (::stat(path.c_str(), &st) != 0) {
          skip(child, errno == ELOOP ? "symlink loop" : "unreadable: broken symbolic link");
          continue;
        }
      }
      const bool is_dir = S_ISDIR(st.st_mode);
      if ((is_dir && is_excluded_folder_name(name)) || rules.ignored(child, is_dir)) {
        ++result.ignored;
        continue;
      }
      if (is_dir) {
        if (!folders_seen.insert({st.st_dev, st.st_ino}).second) {
          skip(child + "/", symlink ? "symlink loop" : "folder already walked");
          continue;
        }
        if (depth + 1 > kMaxDepth) {
          skip(child + "/", "too deeply nested (more than " + std::to_string(kMaxDepth) + " folders)");
          continue;
        }
        walk(path, child, depth + 1);
        if (result.cancelled) return;
        continue;
      }
      if (!S_ISREG(st.st_mode)) {
        skip(child, "unreadable: not a regular file");
        continue;
      }
      WalkedFile f;
      f.relative = child;
      f.absolute = path;
      f.size = st.st_size;
      f.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000ll + st.st_mtim.tv_nsec;
      result.files.push_back(std::move(f));
    }
  }
};

}  // namespace

bool is_excluded_folder_name(std::string_view name) {
  static const char* const kNames[] = {
      ".git",        ".hg",         ".svn",  "node_modules",  "build",  "dist",        "target",
      "vendor",      "__pycache__", ".venv", "venv",          ".tox",   ".mypy_cache", ".pytest_cache",
      ".ruff_cache", ".gradle",     ".next", ".nuxt",         ".cache", ".idea",       "bower_components",
      ".terraform",  ".direnv",     ".eggs", "site-packages", "Pods",   ".svelte-kit", ".parcel-cache",
      ".turbo",      "CMakeFiles"};
  for (const char* n : kNames)
    if (name == n) return true;
  return name.starts_with("cmake-build-") || name.ends_with(".egg-info");
}

WalkResult walk_folder(const std::filesystem::path& root, const WalkOptions& options, const std::atomic<bool>* cancel) {
  Walker w{options, cancel, {}, {}, {}};
  struct stat st {};
  if (::stat(root.c_str(), &st) == 0) w.folders_seen.insert({st.st_dev, st.st_ino});
  w.walk(root, "", 0);
  return std::move(w.result);
}

}  // namespace day0::knowledge
