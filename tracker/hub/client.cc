#include "tracker/hub/client.h"

#include <charconv>

#include "hubwatch/version.h"
#include "tracker/hub/check_repo.h"
#include "tracker/hub/hub_json.h"
#include "tracker/hub/link_header.h"
#include "tracker/hub/repo_id.h"
#include "tracker/hub/url.h"

namespace hubwatch::hub {
namespace {

std::string NormalizeEtag(std::string_view etag) {
  if (etag.starts_with("W/")) etag.remove_prefix(2);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  return std::string(etag);
}

std::optional<uint64_t> ParseUnsigned(std::string_view text) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// Builds the ResolvedFile of a resolve exchange from its identity headers.
HubResult<ResolvedFile> IdentityOf(const ExchangeResponse& exchange, const std::string& url) {
  ResolvedFile file;
  const HttpHeaders& id = exchange.identity;
  const HttpResponse& last = exchange.response;
  file.final_status = last.status;
  file.commit = std::string(id.Get("X-Repo-Commit").value_or(""));
  if (file.commit.empty()) {
    return ProtocolError("resolve answer without X-Repo-Commit", url, last.status);
  }
  std::optional<std::string_view> etag = id.Get("X-Linked-Etag");
  if (!etag) etag = id.Get("ETag");
  file.etag = NormalizeEtag(etag.value_or(""));
  if (auto size = id.Get("X-Linked-Size")) {
    file.size = ParseUnsigned(*size);
    if (!file.size) return ProtocolError("X-Linked-Size is not a number", url, last.status);
  } else if (last.status == 200 && !exchange.from_cache) {
    if (auto length = last.headers.Get("Content-Length")) file.size = ParseUnsigned(*length);
  }
  if (last.status / 100 == 3) {
    file.is_lfs = true;
    file.location = ResolveReference(exchange.final_url, last.headers.Get("Location").value_or(""))
                        .value_or("");
  }
  return file;
}

// "ns/name" from ".../api/models/ns/name/...", "" when the URL is not of that shape.
std::string RepoIdOfApiUrl(const std::string& url) {
  const std::string path = SplitUrl(url).path;
  constexpr std::string_view kPrefix = "/api/models/";
  const size_t at = path.find(kPrefix);
  if (at == std::string::npos) return "";
  const size_t ns_end = path.find('/', at + kPrefix.size());
  if (ns_end == std::string::npos) return "";
  const size_t name_end = path.find('/', ns_end + 1);
  return path.substr(at + kPrefix.size(), name_end == std::string::npos
                                              ? std::string::npos
                                              : name_end - at - kPrefix.size());
}

// The first page of a listing: sort, author, search, repeated expand=, limit; no direction.
std::string ListModelsUrl(const std::string& endpoint, const ListModelsOptions& options) {
  std::string url = endpoint + "/api/models?sort=" + EncodeComponent(options.sort);
  if (!options.author.empty()) url += "&author=" + EncodeComponent(options.author);
  if (!options.search.empty()) url += "&search=" + EncodeComponent(options.search);
  for (const std::string& f : options.filter) url += "&filter=" + EncodeComponent(f);
  for (const std::string& e : options.expand) url += "&expand=" + EncodeComponent(e);
  if (options.page_size > 0) url += "&limit=" + std::to_string(options.page_size);
  return url;
}

}  // namespace

// Follows Link rel="next" from page to page, resolving each target against the URL that
// produced the page (RFC 3986), so absolute and relative links both work.
struct HubClient::Pager : std::enable_shared_from_this<Pager> {
  ExchangeRunner* runner = nullptr;
  ExchangeRequest base_request;
  CallStats stats;
  std::function<bool(const ExchangeResponse&, std::optional<HubError>*)> on_page;
  std::function<void(std::optional<HubError>, const CallStats&)> on_done;
  int pages = 0;

  void Fetch(std::string url) {
    ExchangeRequest request = base_request;
    request.url = std::move(url);
    auto self = shared_from_this();
    runner->Run(std::move(request), &stats,
                [self](HubResult<ExchangeResponse> page) { self->OnPage(std::move(page)); });
  }

  void OnPage(HubResult<ExchangeResponse> page) {
    if (!page.ok()) return on_done(page.error(), stats);
    ++pages;
    std::optional<HubError> error;
    const bool more = on_page(*page, &error);
    if (error) return on_done(std::move(error), stats);
    auto link = page->response.headers.Get("Link");
    std::optional<std::string> target = link ? FindLinkTarget(*link, "next") : std::nullopt;
    if (!more || !target) return on_done(std::nullopt, stats);
    std::optional<std::string> next = ResolveReference(page->final_url, *target);
    if (!next || *next == page->final_url || pages >= 100'000) {
      return on_done(ProtocolError("unusable or looping Link rel=\"next\": " + *target,
                                   page->final_url, page->response.status),
                     stats);
    }
    Fetch(std::move(*next));
  }
};

HubClient::HubClient(HubClientOptions options, HubClientDeps deps)
    : options_(std::move(options)), deps_(deps) {
  if (options_.user_agent.empty()) options_.user_agent = std::string("hubwatch/") + kVersion;
  ExchangeOptions exchange;
  exchange.settings = options_.settings;
  exchange.retry = options_.retry;
  exchange.user_agent = options_.user_agent;
  exchange.max_redirects = options_.max_redirects;
  runner_ =
      std::make_unique<ExchangeRunner>(std::move(exchange), *deps_.transport, *deps_.clock,
                                       *deps_.random, deps_.etag_cache, accounting_, options_.log);
}

HubClient::~HubClient() { Shutdown(); }

void HubClient::Shutdown() { runner_->Shutdown(); }

std::string HubClient::ApiUrl(const std::string& repo, const std::string& suffix) const {
  return options_.settings.endpoint + "/api/models/" + repo + suffix;
}

std::string HubClient::ResolveUrl(const std::string& repo, const std::string& revision,
                                  const std::string& path) const {
  return options_.settings.endpoint + "/" + repo + "/resolve/" + EncodeComponent(revision) + "/" +
         EncodePath(path);
}

void HubClient::Paged(
    RequestKind kind, std::string first_url,
    std::function<bool(const ExchangeResponse&, std::optional<HubError>*)> on_page,
    std::function<void(std::optional<HubError>, const CallStats&)> on_done, bool use_etag_cache) {
  auto pager = std::make_shared<Pager>();
  pager->runner = runner_.get();
  pager->base_request.kind = kind;
  pager->base_request.use_etag_cache = use_etag_cache;
  pager->base_request.redirects = RedirectPolicy::kRefuseOffOrigin;
  pager->base_request.accept_compressed = true;
  pager->base_request.timeout = options_.api_timeout;
  pager->base_request.max_body_bytes = options_.max_api_body_bytes;
  pager->base_request.headers.Add("Accept", "application/json");
  pager->on_page = std::move(on_page);
  pager->on_done = std::move(on_done);
  pager->Fetch(std::move(first_url));
}

void HubClient::Refs(const std::string& repo, bool include_prs, HubCallback<RepoRefs> done) {
  if (!CheckRepo(*deps_.clock, repo, done)) return;
  auto refs = std::make_shared<std::optional<RepoRefs>>();
  Paged(
      RequestKind::kRefs, ApiUrl(repo, include_prs ? "/refs?include_prs=1" : "/refs"),
      [refs](const ExchangeResponse& page, std::optional<HubError>* error) {
        HubResult<RepoRefs> parsed = ParseRefsJson(page.response.body, page.final_url);
        if (!parsed.ok()) {
          *error = parsed.error();
        } else {
          *refs = std::move(parsed).value();
          (*refs)->repo_id = RepoIdOfApiUrl(page.final_url);
        }
        return false;
      },
      [refs, done](std::optional<HubError> error, const CallStats& stats) {
        if (error) return done(std::move(*error), stats);
        done(std::move(**refs), stats);
      });
}

void HubClient::Commits(const std::string& repo, const std::string& revision,
                        CommitsOptions options, HubCallback<CommitList> done) {
  if (!CheckRepo(*deps_.clock, repo, done)) return;
  std::string url = ApiUrl(repo, "/commits/" + EncodeComponent(revision));
  if (options.page_size > 0) url += "?limit=" + std::to_string(options.page_size);
  auto list = std::make_shared<CommitList>();
  Paged(
      RequestKind::kCommits, std::move(url),
      [list, options](const ExchangeResponse& page, std::optional<HubError>* error) {
        HubResult<std::vector<CommitInfo>> parsed =
            ParseCommitsJson(page.response.body, page.final_url);
        if (!parsed.ok()) {
          *error = parsed.error();
          return false;
        }
        if (list->pages++ == 0) {
          if (auto total = page.response.headers.Get("X-Total-Count")) {
            list->total_count = ParseUnsigned(*total);
          }
        }
        for (CommitInfo& commit : parsed.value()) {
          if (!options.stop_at.empty() && commit.id == options.stop_at) {
            list->reached_stop_commit = true;
            return false;
          }
          list->commits.push_back(std::move(commit));
          if (options.max_commits > 0 && list->commits.size() >= options.max_commits) return false;
        }
        return true;
      },
      [list, done](std::optional<HubError> error, const CallStats& stats) {
        if (error) return done(std::move(*error), stats);
        done(std::move(*list), stats);
      });
}

void HubClient::Tree(const std::string& repo, const std::string& revision, TreeOptions options,
                     HubCallback<std::vector<TreeEntry>> done) {
  if (!CheckRepo(*deps_.clock, repo, done)) return;
  std::string url = ApiUrl(repo, "/tree/" + EncodeComponent(revision));
  if (!options.path.empty()) url += "/" + EncodePath(options.path);
  url += std::string("?recursive=") + (options.recursive ? "true" : "false") +
         "&expand=" + (options.expand ? "true" : "false");
  auto entries = std::make_shared<std::vector<TreeEntry>>();
  Paged(
      RequestKind::kTree, std::move(url),
      [entries](const ExchangeResponse& page, std::optional<HubError>* error) {
        HubResult<std::vector<TreeEntry>> parsed =
            ParseTreeJson(page.response.body, page.final_url);
        if (!parsed.ok()) {
          *error = parsed.error();
          return false;
        }
        for (TreeEntry& e : parsed.value()) entries->push_back(std::move(e));
        return true;
      },
      [entries, done](std::optional<HubError> error, const CallStats& stats) {
        if (error) return done(std::move(*error), stats);
        done(std::move(*entries), stats);
      });
}

void HubClient::GetModelInfo(const std::string& repo, ModelInfoOptions options,
                             HubCallback<ModelInfo> done) {
  if (!CheckRepo(*deps_.clock, repo, done)) return;
  std::string url =
      ApiUrl(repo, options.revision ? "/revision/" + EncodeComponent(*options.revision) : "");
  std::string query;
  for (const std::string& field : options.expand) {
    query += (query.empty() ? "?" : "&") + std::string("expand=") + EncodeComponent(field);
  }
  if (options.blobs) query += (query.empty() ? "?" : "&") + std::string("blobs=true");
  auto info = std::make_shared<std::optional<ModelInfo>>();
  Paged(
      RequestKind::kModelInfo, url + query,
      [info](const ExchangeResponse& page, std::optional<HubError>* error) {
        HubResult<ModelInfo> parsed = ParseModelInfoJson(page.response.body, page.final_url);
        if (!parsed.ok())
          *error = parsed.error();
        else
          *info = std::move(parsed).value();
        return false;
      },
      [info, done](std::optional<HubError> error, const CallStats& stats) {
        if (error) return done(std::move(*error), stats);
        done(std::move(**info), stats);
      });
}

void HubClient::ListModels(ListModelsOptions options, HubCallback<std::vector<ModelSummary>> done) {
  std::string url = ListModelsUrl(options_.settings.endpoint, options);
  auto models = std::make_shared<std::vector<ModelSummary>>();
  // Listing pages are never revalidated: each read starts at the newest entry and its cursor
  // URLs are new every time, so caching them would only grow the cache.
  Paged(
      RequestKind::kListModels, std::move(url),
      [models, o = std::move(options)](const ExchangeResponse& page,
                                       std::optional<HubError>* error) {
        HubResult<std::vector<ModelSummary>> parsed =
            ParseModelListJson(page.response.body, page.final_url);
        if (!parsed.ok()) {
          *error = parsed.error();
          return false;
        }
        bool more = true;
        for (ModelSummary& m : parsed.value()) {
          if (o.last_wanted && o.last_wanted(m)) more = false;
          models->push_back(std::move(m));
          if (o.max_results > 0 && models->size() >= o.max_results) return false;
        }
        return more;
      },
      [models, done](std::optional<HubError> error, const CallStats& stats) {
        if (error) return done(std::move(*error), stats);
        done(std::move(*models), stats);
      },
      /*use_etag_cache=*/false);
}

void HubClient::ResolveHead(const std::string& repo, const std::string& revision,
                            const std::string& path, HubCallback<ResolvedFile> done) {
  if (!CheckRepo(*deps_.clock, repo, done)) return;
  ExchangeRequest request;
  request.kind = RequestKind::kResolveHead;
  request.method = HttpMethod::kHead;
  request.url = ResolveUrl(repo, revision, path);
  request.redirects = RedirectPolicy::kSameOrigin;
  request.timeout = options_.head_timeout;
  auto stats = std::make_shared<CallStats>();
  const std::string url = request.url;
  runner_->Run(std::move(request), stats.get(),
               [stats, done, url](HubResult<ExchangeResponse> result) {
                 if (!result.ok()) return done(result.error(), *stats);
                 done(IdentityOf(*result, url), *stats);
               });
}

void HubClient::ResolveGet(const std::string& repo, const std::string& revision,
                           const std::string& path, HubCallback<FileContent> done,
                           bool use_etag_cache) {
  if (!CheckRepo(*deps_.clock, repo, done)) return;
  ExchangeRequest request;
  request.kind = RequestKind::kResolveGet;
  request.url = ResolveUrl(repo, revision, path);
  request.redirects = RedirectPolicy::kAll;
  request.use_etag_cache = use_etag_cache;
  request.timeout = options_.download_timeout;
  request.max_body_bytes = options_.max_download_bytes;
  auto stats = std::make_shared<CallStats>();
  const std::string url = request.url;
  const uint64_t limit = options_.max_download_bytes;
  runner_->Run(
      std::move(request), stats.get(),
      [stats, done, url, limit](HubResult<ExchangeResponse> result) {
        if (!result.ok()) return done(result.error(), *stats);
        HttpResponse& response = result->response;
        if (response.body_limit_hit) {
          return done(ProtocolError("file is larger than the download limit of " +
                                        std::to_string(limit) + " bytes",
                                    url, response.status),
                      *stats);
        }
        HubResult<ResolvedFile> file = IdentityOf(*result, url);
        if (!file.ok()) return done(file.error(), *stats);
        if (file->size && *file->size != response.body.size()) {
          return done(ProtocolError("wrong length: X-Linked-Size " + std::to_string(*file->size) +
                                        ", body " + std::to_string(response.body.size()) + " bytes",
                                    url, response.status),
                      *stats);
        }
        FileContent content;
        content.file = std::move(file).value();
        content.file.is_lfs = OriginOf(result->final_url) != OriginOf(url);
        if (content.file.is_lfs) content.file.location = result->final_url;
        content.from_cache = result->from_cache;
        content.body = std::move(response.body);
        done(std::move(content), *stats);
      });
}
}  // namespace hubwatch::hub
