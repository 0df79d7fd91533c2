#include "storage/file_util.h"

#include <fcntl.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <string>

namespace day0::storage {
namespace {

StoreError errno_error(const std::string& what, const std::filesystem::path& path) {
  return store_error(what + " " + path.string() + ": " + std::strerror(errno));
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

StoreStatus write_all(int fd, std::string_view bytes, const std::filesystem::path& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_error("cannot write", path);
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return Ok{};
}

std::filesystem::path partial_name(const std::filesystem::path& to) {
  auto partial = to;
  partial += ".partial";
  return partial;
}

StoreStatus finish(Fd& out, const std::filesystem::path& partial, const std::filesystem::path& to) {
  if (::fsync(out.fd) != 0) return errno_error("cannot flush", partial);
  ::close(out.fd);
  out.fd = -1;
  if (::rename(partial.c_str(), to.c_str()) != 0) return errno_error("cannot rename into", to);
  return sync_path(to.has_parent_path() ? to.parent_path() : std::filesystem::path("."));
}

}  // namespace

StoreStatus sync_path(const std::filesystem::path& path) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) return errno_error("cannot open", path);
  if (::fsync(f.fd) != 0) return errno_error("cannot flush", path);
  return Ok{};
}

StoreStatus copy_file_durably(const std::filesystem::path& from, const std::filesystem::path& to) {
  Fd in{::open(from.c_str(), O_RDONLY | O_CLOEXEC)};
  if (in.fd < 0) return errno_error("cannot open", from);
  const auto partial = partial_name(to);
  Fd out{::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)};
  if (out.fd < 0) return errno_error("cannot create", partial);
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(in.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_error("cannot read", from);
    if (n == 0) break;
    DAY0_STORE_TRY(write_all(out.fd, std::string_view(buffer, static_cast<std::size_t>(n)), partial));
  }
  return finish(out, partial, to);
}

StoreStatus write_file_durably(const std::filesystem::path& to, std::string_view bytes) {
  const auto partial = partial_name(to);
  Fd out{::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
  if (out.fd < 0) return errno_error("cannot create", partial);
  DAY0_STORE_TRY(write_all(out.fd, bytes, partial));
  return finish(out, partial, to);
}

}  // namespace day0::storage
