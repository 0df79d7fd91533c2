#include "hub/digest.h"

#include <openssl/evp.h>

namespace day0::hub {

struct Digest::State {
  Kind kind;
  EVP_MD_CTX* ctx = nullptr;
  ~State() { EVP_MD_CTX_free(ctx); }
};

Digest::Digest(Kind kind) : state_(std::make_unique<State>()) {
  state_->kind = kind;
  state_->ctx = EVP_MD_CTX_new();
  reset();
}

Digest::~Digest() = default;
Digest::Digest(Digest&&) noexcept = default;
Digest& Digest::operator=(Digest&&) noexcept = default;

void Digest::reset() {
  EVP_DigestInit_ex(state_->ctx, state_->kind == Kind::sha256 ? EVP_sha256() : EVP_sha1(), nullptr);
}

void Digest::update(const void* data, std::size_t size) { EVP_DigestUpdate(state_->ctx, data, size); }

std::string Digest::hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(state_->ctx, digest, &length);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 15];
  }
  return out;
}

}  // namespace day0::hub
