#pragma once

// Digests fakehub needs to look like git and git-lfs: sha1/sha256 in hex, git blob and tree ids.
// Pure functions (OpenSSL EVP underneath).

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hubwatch::fakehub {

std::string Sha1Hex(std::string_view data);
std::string Sha256Hex(std::string_view data);
// git hash-object: sha1("blob <size>\0" + content).
std::string GitBlobOid(std::string_view content);
// A git tree object id; entries are (name, is_directory, oid hex).
std::string GitTreeOid(std::vector<std::tuple<std::string, bool, std::string>> entries);

}  // namespace hubwatch::fakehub
