#include "tests/fakehub/hashing.h"

#include <openssl/evp.h>

#include <algorithm>
#include <tuple>

namespace hubwatch::fakehub {
namespace {

std::string DigestHex(const EVP_MD* md, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(data.data(), data.size(), out, &length, md, nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[out[i] >> 4];
    hex += kHex[out[i] & 15];
  }
  return hex;
}

std::string HexToBytes(const std::string& hex) {
  std::string bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  }
  return bytes;
}

}  // namespace

std::string Sha1Hex(std::string_view data) { return DigestHex(EVP_sha1(), data); }
std::string Sha256Hex(std::string_view data) { return DigestHex(EVP_sha256(), data); }

std::string GitBlobOid(std::string_view content) {
  std::string object = "blob " + std::to_string(content.size());
  object += '\0';
  object += content;
  return Sha1Hex(object);
}

std::string GitTreeOid(std::vector<std::tuple<std::string, bool, std::string>> entries) {
  // git orders directories as if their name ended in '/'.
  auto key = [](const auto& e) { return std::get<0>(e) + (std::get<1>(e) ? "/" : ""); };
  std::sort(entries.begin(), entries.end(),
            [&](const auto& a, const auto& b) { return key(a) < key(b); });
  std::string body;
  for (const auto& [name, is_dir, oid] : entries) {
    body += (is_dir ? "40000 " : "100644 ") + name;
    body += '\0';
    body += HexToBytes(oid);
  }
  std::string object = "tree " + std::to_string(body.size());
  object += '\0';
  object += body;
  return Sha1Hex(object);
}

}  // namespace hubwatch::fakehub
