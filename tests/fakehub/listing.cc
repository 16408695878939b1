// fakehub's GET /api/models: the Hub's model listing as a change hint reads it (reference §11).
//   sort     lastModified | createdAt | downloads | likes | likes30d | trendingScore | id;
//            absent: by id. Descending only: a direction other than -1 is a 400, as is an
//            unknown key. Ties break on the id, descending.
//   expand   expand[]=x or expand=x, repeatable: only those properties plus _id and id; an
//            unknown property is a 400. Without it: the Hub's default fields, lastModified only
//            with sort=lastModified, never sha.
//   limit    page size, 1..1000 (default 1000); author (one owner), search (substring of the id,
//            case-insensitive, repeatable: all must match), filter (a tag, pipeline_tag or
//            library_name, repeatable: all must match).
//   cursor   opaque (base64url of a keyset position); the Link rel="next" URL carries every
//            parameter of the request plus the cursor, to be followed verbatim. Keyset paging:
//            a repo that moves to the top between pages is not seen again in that walk.
// Listed: every repo whose main head is visible on the replay clock (lastModified = that head's
// date, in whole seconds), private ones only to a known token, gated ones to everyone, and the
// background churn pool (churn.h) at its current heads.

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/fakehub/churn.h"
#include "tests/fakehub/hub_state.h"

namespace hubwatch::fakehub {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

const std::set<std::string>& SortKeys() {
  static const std::set<std::string> keys = {"lastModified", "createdAt",     "downloads", "likes",
                                             "likes30d",     "trendingScore", "id"};
  return keys;
}

constexpr char kBase64Url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string Base64UrlEncode(std::string_view in) {
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (unsigned char c : in) {
    bits = (bits << 8) | c;
    count += 8;
    while (count >= 6) {
      count -= 6;
      out += kBase64Url[(bits >> count) & 63];
    }
  }
  if (count > 0) out += kBase64Url[(bits << (6 - count)) & 63];
  return out;
}

std::optional<std::string> Base64UrlDecode(std::string_view in) {
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (char c : in) {
    const char* at = std::find(kBase64Url, kBase64Url + 64, c);
    if (at == kBase64Url + 64) return std::nullopt;
    bits = (bits << 6) | static_cast<uint32_t>(at - kBase64Url);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out += static_cast<char>((bits >> count) & 0xff);
    }
  }
  return out;
}

// A keyset position: the last item a page showed.
struct Cursor {
  int64_t key = 0;
  std::string id;
};

std::string EncodeCursor(const std::string& sort, int64_t key, const std::string& id) {
  return Base64UrlEncode(json{{"sort", sort}, {"key", key}, {"id", id}}.dump());
}

std::optional<Cursor> DecodeCursor(const std::string& text, const std::string& sort) {
  std::optional<std::string> raw = Base64UrlDecode(text);
  if (!raw) return std::nullopt;
  json j = json::parse(*raw, nullptr, false);
  if (!j.is_object() || !j.contains("sort") || !j["sort"].is_string() || j["sort"] != sort ||
      !j.contains("key") || !j["key"].is_number_integer() || !j.contains("id") ||
      !j["id"].is_string()) {
    return std::nullopt;
  }
  return Cursor{j["key"].get<int64_t>(), j["id"].get<std::string>()};
}

// One listed model: a real repo at its main head, or a churn repo at its latest change.
struct Listed {
  const Repo* repo = nullptr;
  const Commit* head = nullptr;
  const ChurnRepo* churn = nullptr;
  int64_t change = -1;
  int64_t modified = 0;
  int64_t key = 0;
  const std::string& id() const { return repo ? repo->id : churn->id; }
};

bool Before(const Listed& a, const Listed& b) {
  return a.key != b.key ? a.key > b.key : a.id() > b.id();
}
bool PastCursor(const Listed& e, const Cursor& c) {
  return e.key != c.key ? e.key < c.key : e.id() < c.id;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string OwnerOf(const std::string& id) {
  const size_t slash = id.find('/');
  return slash == std::string::npos ? "" : id.substr(0, slash);
}

const std::vector<std::string>& ChurnTags() {
  static const std::vector<std::string> tags = {"transformers", "safetensors", "churn",
                                                "text-generation"};
  return tags;
}

// The value of listing property `key` for `e`; nullopt when fakehub does not model it (the Hub
// leaves out what a repo does not have).
std::optional<ordered_json> Property(const Listed& e, const std::string& key) {
  const bool real = e.repo != nullptr;
  if (key == "author") return real ? OwnerOf(e.repo->id) : e.churn->owner;
  if (key == "sha") return real ? e.head->id : ChurnSha(e.churn->id, e.change);
  if (key == "lastModified") return FormatIsoTime(e.modified);
  if (key == "createdAt") return real ? e.repo->created_at : FormatIsoTime(e.churn->created);
  if (key == "private") return real && e.repo->is_private;
  if (key == "gated") {
    return real && e.repo->gated ? ordered_json(*e.repo->gated) : ordered_json(false);
  }
  if (key == "disabled") return real && e.repo->disabled;
  if (key == "downloads" || key == "downloadsAllTime") return real ? e.repo->downloads : 0;
  if (key == "likes" || key == "trendingScore") return real ? e.repo->likes : 0;
  if (key == "tags") return real ? e.repo->tags : ChurnTags();
  if (key == "pipeline_tag" || key == "library_name") {
    const std::string value = !real ? (key == "pipeline_tag" ? "text-generation" : "transformers")
                              : key == "pipeline_tag" ? e.repo->pipeline_tag
                                                      : e.repo->library_name;
    if (value.empty()) return std::nullopt;
    return value;
  }
  if (key == "spaces") return ordered_json::array();
  if (key == "siblings" || key == "usedStorage") {
    ordered_json siblings = ordered_json::array();
    uint64_t used = 0;
    if (real) {
      for (const auto& [path, blob] : *e.head->files) {
        siblings.push_back({{"rfilename", path}});
        used += blob->size;
      }
    } else {
      siblings.push_back({{"rfilename", "config.json"}});
    }
    return key == "siblings" ? siblings : ordered_json(used);
  }
  return std::nullopt;
}

ordered_json ItemJson(const Listed& e, const std::vector<std::string>& expand,
                      const std::string& sort) {
  ordered_json item;
  item["_id"] = e.repo ? e.repo->internal_id : e.churn->internal_id;
  item["id"] = e.id();
  auto put = [&](const std::string& key) {
    if (std::optional<ordered_json> v = Property(e, key)) item[key] = std::move(*v);
  };
  if (!expand.empty()) {
    for (const std::string& key : expand) put(key);
    return item;
  }
  for (const char* key :
       {"likes", "trendingScore", "private", "downloads", "tags", "pipeline_tag", "library_name"}) {
    put(key);
  }
  if (sort == "lastModified") put("lastModified");
  put("createdAt");
  item["modelId"] = e.id();
  return item;
}

// The query string without its cursor parameter, as sent (every other parameter kept verbatim).
std::string QueryWithoutCursor(std::string_view raw) {
  std::string out;
  while (!raw.empty()) {
    const size_t amp = raw.find('&');
    const std::string_view item = raw.substr(0, amp);
    const std::string key = PercentDecode(item.substr(0, item.find('=')));
    if (!item.empty() && key != "cursor") out += (out.empty() ? "" : "&") + std::string(item);
    if (amp == std::string_view::npos) break;
    raw.remove_prefix(amp + 1);
  }
  return out;
}

}  // namespace

FakeResponse HubState::ListModels(const FakeRequest& request, const Query& query,
                                  bool authenticated) {
  auto first = [&](const char* key) {
    auto it = query.find(key);
    return it == query.end() ? std::string() : it->second;
  };
  auto all = [&](const char* key) {
    std::vector<std::string> values;
    for (auto [it, end] = query.equal_range(key); it != end; ++it) values.push_back(it->second);
    return values;
  };
  const std::string sort = first("sort");
  if (query.count("sort") && !SortKeys().count(sort)) {
    return JsonError(400, "",
                     "Invalid sort \"" + sort +
                         "\": expected one of lastModified, createdAt, downloads, likes, "
                         "likes30d, trendingScore, id");
  }
  for (const std::string& direction : all("direction")) {
    if (direction != "-1") {
      return JsonError(400, "", "\"direction\" must be -1: models are listed in descending order");
    }
  }
  std::vector<std::string> expand;
  for (const std::string& key : all("expand")) {
    if (!ModelExpandKeys().count(key)) {
      return JsonError(400, "",
                       "\"expand\" must be one of the model properties, got \"" + key + "\"");
    }
    if (std::find(expand.begin(), expand.end(), key) == expand.end()) expand.push_back(key);
  }
  int limit = 1000;
  if (query.count("limit")) {
    const std::string text = first("limit");
    int value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value < 1) {
      return JsonError(400, "", "\"limit\" must be a positive integer, got \"" + text + "\"");
    }
    limit = std::min(value, 1000);
  }
  std::optional<Cursor> cursor;
  if (query.count("cursor")) {
    cursor = DecodeCursor(first("cursor"), sort);
    if (!cursor) return JsonError(400, "", "Invalid cursor");
  }
  const std::string author = first("author");
  std::vector<std::string> searches = all("search");
  for (std::string& s : searches) s = Lower(std::move(s));
  const std::vector<std::string> filters = all("filter");

  auto keep = [&](const std::string& id, const std::string& owner,
                  const std::vector<std::string>& tags, const std::string& pipeline,
                  const std::string& library) {
    if (!author.empty() && owner != author) return false;
    const std::string lower = searches.empty() ? "" : Lower(id);
    for (const std::string& s : searches) {
      if (lower.find(s) == std::string::npos) return false;
    }
    for (const std::string& f : filters) {
      if (f != pipeline && f != library && std::find(tags.begin(), tags.end(), f) == tags.end())
        return false;
    }
    return true;
  };
  auto key_of = [&](const Listed& e, int64_t created, uint64_t downloads, uint64_t likes) {
    if (sort == "lastModified") return e.modified;
    if (sort == "createdAt") return created;
    if (sort == "downloads") return static_cast<int64_t>(downloads);
    if (sort == "likes" || sort == "likes30d" || sort == "trendingScore")
      return static_cast<int64_t>(likes);
    return int64_t{0};  // id (or no sort): the tie-break decides
  };

  std::vector<Listed> listed;
  for (const Repo& repo : repos_) {
    if (repo.deleted || (repo.is_private && !authenticated)) continue;
    const int head = MainHead(repo);
    if (head < 0) continue;
    if (!keep(repo.id, OwnerOf(repo.id), repo.tags, repo.pipeline_tag, repo.library_name)) continue;
    Listed e;
    e.repo = &repo;
    e.head = &repo.commits[static_cast<size_t>(head)];
    e.modified = e.head->time;
    e.key = key_of(e, sort == "createdAt" ? ParseIsoTime(repo.created_at).value_or(0) : 0,
                   repo.downloads, repo.likes);
    listed.push_back(e);
  }
  if (!churn_pool_.empty()) {
    const int64_t now = ChurnNow();
    for (size_t j = 0; j < churn_pool_.size(); ++j) {
      const ChurnRepo& c = churn_pool_[j];
      if (!keep(c.id, c.owner, ChurnTags(), "text-generation", "transformers")) continue;
      Listed e;
      e.churn = &c;
      e.change = LatestChurnChange(churn_, static_cast<int>(j), now);
      if (e.change < 0) continue;
      e.modified = ChurnChangeTime(churn_, e.change);
      e.key = key_of(e, c.created, 0, 0);
      listed.push_back(e);
    }
  }
  if (cursor) std::erase_if(listed, [&](const Listed& e) { return !PastCursor(e, *cursor); });
  const size_t shown = std::min(listed.size(), static_cast<size_t>(limit));
  std::partial_sort(listed.begin(), listed.begin() + static_cast<ptrdiff_t>(shown), listed.end(),
                    Before);
  ordered_json list = ordered_json::array();
  for (size_t i = 0; i < shown; ++i) list.push_back(ItemJson(listed[i], expand, sort));
  FakeResponse response = JsonWithEtag(request, list.dump());
  if (shown < listed.size()) {
    const Listed& last = listed[shown - 1];
    const std::string rest = QueryWithoutCursor(request.query);
    response.Set("Link", LinkTo("/api/models?" + rest + (rest.empty() ? "" : "&") +
                                "cursor=" + EncodeCursor(sort, last.key, last.id())));
  }
  return response;
}

}  // namespace hubwatch::fakehub
