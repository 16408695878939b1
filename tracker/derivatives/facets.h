#pragma once

// FacetSet: what a derivative check compares, read from one revision's files or from a GGUF
// file's metadata. A facet is one piece of content a fix can change:
//
//   "<file>#<key>"         a top-level key of config.json, generation_config.json,
//                          tokenizer_config.json (chat_template aside), special_tokens_map.json
//                          or tokenizer.json
//   "chat_template"        the default chat template, from chat_template.jinja if shipped, else
//                          tokenizer_config.json's chat_template (a string, or the "default"
//                          entry of a list of {name, template})
//   "chat_template:<name>" a named template (tool_use, rag, ...)
//
// A value is the SHA-256 (hex) of the facet's canonical form: compact JSON with sorted keys; a
// special token written as an object ({"content": "<|eot_id|>", ...}) is its content string;
// a template is its text. Cosmetic keys (transformers_version, _name_or_path, ...) are not
// facets: a fix that also bumped them must not make every copy look diverged.
//
// A GGUF header speaks for a fixed set of facets only: the chat templates, tokenizer_config's
// bos_token/eos_token (the strings at the header's ids), add_bos_token/add_eos_token, and
// config.json's bos_token_id/eos_token_id. llama.cpp's converter takes EOS from
// tokenizer_config.json (config.json as a fallback) and never reads generation_config.json.
// Pure functions and value types; thread-safe.

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "estimator/base/result.h"
#include "estimator/formats/gguf_header.h"

namespace hubwatch::derivatives {

// Whether a revision says anything about a facet.
enum class Coverage {
  kNotShipped,  // the file the facet lives in is not there (or a GGUF cannot say)
  kAbsent,      // the file is there, the key is not
  kPresent,
};

struct FacetSet {
  std::map<std::string, std::string> values;  // facet -> SHA-256 hex of its canonical form
  std::set<std::string> files;                // the facet files the revision ships
  bool from_gguf = false;                     // read from a GGUF header
  std::map<std::string, std::string> errors;  // file -> why it could not be read

  Coverage Cover(const std::string& facet) const;
  // nullptr unless kPresent.
  const std::string* Value(const std::string& facet) const;
};

// The files a check reads of a non-GGUF derivative, in the order it reads them.
const std::vector<std::string>& FacetFiles();

// Facets of one revision's files: path -> content, for the paths of FacetFiles() it ships. A
// file that is not JSON (or not an object) is recorded in `errors` and still counts as shipped
// with no keys: a derivative with a broken tokenizer_config.json has not copied a fix.
FacetSet FacetsOfFiles(const std::map<std::string, std::string>& files);

// Facets of a GGUF file's metadata.
FacetSet FacetsOfGguf(const GgufMetadata& metadata);

// The JSON form stored with a derivative: {"values": {...}, "files": [...], "gguf": bool,
// "errors": {...}}.
std::string FacetsToJson(const FacetSet& facets);
Result<FacetSet> FacetsFromJson(std::string_view text);

}  // namespace hubwatch::derivatives
