#pragma once

// The git blob id of some content: sha1("blob <size>\0" + content), lower-case hex. The Hub's
// tree lists it for every file, so a fetched small file can be checked against it.

#include <string>
#include <string_view>

namespace hubwatch::pipeline {

std::string GitBlobOid(std::string_view content);

}  // namespace hubwatch::pipeline
