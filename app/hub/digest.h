#pragma once
// A streaming hash through OpenSSL's EVP interface: SHA-256 (the Hub's LFS files) or SHA-1 (git
// blob ids of the small files), fed piece by piece as a download arrives.
#include <cstddef>
#include <memory>
#include <string>

namespace day0::hub {

class Digest {
 public:
  enum class Kind { sha256, sha1 };
  explicit Digest(Kind kind);
  ~Digest();
  Digest(Digest&&) noexcept;
  Digest& operator=(Digest&&) noexcept;

  void update(const void* data, std::size_t size);
  // Lowercase hex; the digest is finished and cannot be fed any more.
  std::string hex();
  // Starts again from nothing.
  void reset();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace day0::hub
