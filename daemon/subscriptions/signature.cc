#include "daemon/subscriptions/signature.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <charconv>
#include <cstdlib>
#include <vector>

namespace hubwatch::subscriptions {
namespace {

const unsigned char* Bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

bool IsBase64Char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '/';
}

std::string HmacSha256(std::string_view key, std::string_view message) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), Bytes(message), message.size(), out,
       &length);
  return std::string(reinterpret_cast<const char*>(out), length);
}

}  // namespace

std::string Base64Encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), Bytes(bytes),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

Result<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) return Error::InvalidInput("base64: length is not a multiple of 4");
  size_t padding = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '=' && i + 2 >= text.size() && text.size() >= 4) {
      ++padding;
    } else if (!IsBase64Char(c) || padding > 0) {
      return Error::InvalidInput("base64: unexpected character");
    }
  }
  if (padding > 2) return Error::InvalidInput("base64: too much padding");
  std::string out(3 * (text.size() / 4), '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()), Bytes(text),
                                static_cast<int>(text.size()));
  if (n < 0) return Error::InvalidInput("base64: not valid");
  out.resize(static_cast<size_t>(n) - padding);
  return out;
}

Result<std::string> GenerateSecret() {
  unsigned char key[32];
  if (RAND_bytes(key, sizeof key) != 1) return Error::Io("no random bytes for a webhook secret");
  return std::string(kSecretPrefix) +
         Base64Encode(std::string_view(reinterpret_cast<const char*>(key), sizeof key));
}

Result<std::string> ParseSecret(std::string_view secret) {
  if (secret.substr(0, kSecretPrefix.size()) != kSecretPrefix) {
    return Error::InvalidInput("webhook secret must start with whsec_");
  }
  Result<std::string> key = Base64Decode(secret.substr(kSecretPrefix.size()));
  if (!key.ok()) return Error::InvalidInput("webhook secret: whsec_ must be followed by base64");
  if (key->size() < 24 || key->size() > 64) {
    return Error::InvalidInput("webhook secret must hold 24 to 64 bytes, got " +
                               std::to_string(key->size()));
  }
  return key;
}

std::string Sign(std::string_view key, std::string_view id, int64_t timestamp,
                 std::string_view body) {
  std::string message;
  const std::string ts = std::to_string(timestamp);
  message.reserve(id.size() + ts.size() + body.size() + 2);
  message.append(id).append(".").append(ts).append(".").append(body);
  return "v1," + Base64Encode(HmacSha256(key, message));
}

Status Verify(std::string_view secret, std::string_view id, std::string_view timestamp,
              std::string_view body, std::string_view signatures, int64_t now,
              int64_t tolerance_s) {
  Result<std::string> key = ParseSecret(secret);
  if (!key.ok()) return key.error();
  int64_t ts = 0;
  const auto [end, ec] = std::from_chars(timestamp.data(), timestamp.data() + timestamp.size(), ts);
  if (ec != std::errc() || end != timestamp.data() + timestamp.size() || timestamp.empty()) {
    return Error::InvalidInput("webhook-timestamp is not an integer");
  }
  if (ts < now - tolerance_s || ts > now + tolerance_s) {
    return Error::InvalidInput("webhook-timestamp is outside the tolerance");
  }
  const std::string expected = Sign(*key, id, ts, body);
  while (!signatures.empty()) {
    const size_t space = signatures.find(' ');
    const std::string_view entry = signatures.substr(0, space);
    signatures = space == std::string_view::npos ? "" : signatures.substr(space + 1);
    if (entry.size() == expected.size() &&
        CRYPTO_memcmp(entry.data(), expected.data(), expected.size()) == 0) {
      return Status::Ok();
    }
  }
  return Error::InvalidInput("no webhook-signature entry matches");
}

std::string WebhookId(std::string_view advisory_id, std::string_view target) {
  std::string message;
  message.append(advisory_id).append("\n").append(target);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(message.data(), message.size(), digest, &length, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id = "msg_";
  for (unsigned int i = 0; i < 16; ++i) {
    id.push_back(kHex[digest[i] >> 4]);
    id.push_back(kHex[digest[i] & 15]);
  }
  return id;
}

}  // namespace hubwatch::subscriptions
