#include "daemon/api/osv_query.h"

#include <charconv>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "daemon/api/router.h"
#include "tracker/hub/repo_id.h"

namespace hubwatch::api {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

// A string member, "" when absent; an error when present with another type.
Result<std::string> OptionalString(const nlohmann::json& object, const char* key,
                                   const std::string& where) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::string();
  if (!it->is_string()) return Error::InvalidInput(where + key + " must be a string");
  return it->get<std::string>();
}

// pkg:huggingface/<ns>/<name>[@<version>][?qualifiers][#subpath] -> query fields.
Status ParsePurl(std::string purl, OsvQuery& q, bool* versioned) {
  const size_t hash = purl.find('#');
  if (hash != std::string::npos) purl.resize(hash);
  const size_t question = purl.find('?');
  if (question != std::string::npos) purl.resize(question);
  if (Lower(purl.substr(0, 4)) != "pkg:") {
    return Error::InvalidInput("package.purl must start with pkg:");
  }
  std::string rest = purl.substr(4);
  while (!rest.empty() && rest.front() == '/') rest.erase(0, 1);
  const size_t slash = rest.find('/');
  if (slash == std::string::npos || slash == 0) {
    return Error::InvalidInput("package.purl needs a type and a name (pkg:type/name)");
  }
  if (Lower(rest.substr(0, slash)) != "huggingface") {
    q.matches_nothing = true;
    return Status::Ok();
  }
  std::string path = rest.substr(slash + 1);
  const size_t at = path.rfind('@');
  if (at != std::string::npos) {
    std::optional<std::string> version = PercentDecode(path.substr(at + 1), false);
    if (!version || version->empty()) return Error::InvalidInput("package.purl has a bad @version");
    q.version = *version;
    *versioned = true;
    path.resize(at);
  }
  std::optional<std::string> id = PercentDecode(path, false);
  if (!id) return Error::InvalidInput("package.purl has a bad percent escape");
  q.repo = *id;
  return Status::Ok();
}

Status ParsePackage(const nlohmann::json& package, std::string_view hub_url, OsvQuery& q,
                    bool* versioned) {
  if (!package.is_object()) return Error::InvalidInput("package must be an object");
  Result<std::string> name = OptionalString(package, "name", "package.");
  Result<std::string> ecosystem = OptionalString(package, "ecosystem", "package.");
  Result<std::string> purl = OptionalString(package, "purl", "package.");
  for (const Result<std::string>* r : {&name, &ecosystem, &purl}) {
    if (!r->ok()) return r->error();
  }
  if (!purl->empty()) {
    if (!name->empty() || !ecosystem->empty()) {
      return Error::InvalidInput("package takes a purl or a name and ecosystem, not both");
    }
    return ParsePurl(*purl, q, versioned);
  }
  if (name->empty()) return Error::InvalidInput("package needs a name or a purl");
  if (*ecosystem == "GIT") {
    // osv.dev's GIT queries name the repository URL.
    std::string url = *name;
    const std::string prefix = std::string(hub_url) + "/";
    if (url.size() > 4 && url.compare(url.size() - 4, 4, ".git") == 0) url.resize(url.size() - 4);
    if (url.rfind(prefix, 0) != 0) {
      q.matches_nothing = true;
      return Status::Ok();
    }
    q.repo = url.substr(prefix.size());
    return Status::Ok();
  }
  if (!ecosystem->empty()) {  // no OSV ecosystem covers Hugging Face models
    q.matches_nothing = true;
    return Status::Ok();
  }
  q.repo = *name;
  return Status::Ok();
}

}  // namespace

Result<OsvQuery> ParseOsvQuery(const nlohmann::json& query, std::string_view hub_url) {
  if (!query.is_object()) return Error::InvalidInput("a query must be a JSON object");
  OsvQuery q;
  Result<std::string> commit = OptionalString(query, "commit", "");
  Result<std::string> version = OptionalString(query, "version", "");
  Result<std::string> token = OptionalString(query, "page_token", "");
  for (const Result<std::string>* r : {&commit, &version, &token}) {
    if (!r->ok()) return r->error();
  }
  if (!commit->empty() && !version->empty()) {
    return Error::InvalidInput("commit and version exclude each other");
  }
  if (!commit->empty()) {
    q.commit = Lower(*commit);
    if (!hub::IsCommitId(q.commit)) {
      return Error::InvalidInput("commit must be a full revision id (40 hex digits)");
    }
  }
  bool purl_versioned = false;
  const auto package = query.find("package");
  const bool has_package = package != query.end() && !package->is_null();
  if (has_package) {
    if (Status s = ParsePackage(*package, hub_url, q, &purl_versioned); !s.ok()) return s.error();
  }
  if (purl_versioned && (!version->empty() || !commit->empty())) {
    return Error::InvalidInput("package.purl has a @version; do not give version or commit too");
  }
  if (!version->empty()) {
    if (!has_package) return Error::InvalidInput("version needs a package");
    q.version = *version;
  }
  if (!has_package && q.commit.empty()) {
    return Error::InvalidInput("a query needs a commit or a package");
  }
  if (!q.repo.empty() && !q.matches_nothing) {
    if (Status s = hub::ValidateRepoId(q.repo); !s.ok()) {
      return Error::InvalidInput("package name: " + s.error().message);
    }
  }
  if (!token->empty()) {
    const auto [end, ec] =
        std::from_chars(token->data(), token->data() + token->size(), q.after_seq);
    if (ec != std::errc() || end != token->data() + token->size() || q.after_seq < 0) {
      return Error::InvalidInput("page_token is not one this server gave");
    }
  }
  return q;
}

std::string PageToken(int64_t last_seq) { return std::to_string(last_seq); }

std::vector<size_t> FirstAsked(const std::vector<OsvQuery>& queries) {
  std::map<std::tuple<std::string_view, std::string_view, std::string_view, int64_t, bool>, size_t>
      seen;
  std::vector<size_t> first(queries.size());
  for (size_t i = 0; i < queries.size(); ++i) {
    const OsvQuery& q = queries[i];
    first[i] = seen.try_emplace({q.repo, q.commit, q.version, q.after_seq, q.matches_nothing}, i)
                   .first->second;
  }
  return first;
}

}  // namespace hubwatch::api
