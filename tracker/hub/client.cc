#include "tracker/hub/client.h"

#include "hubwatch/version.h"
#include "tracker/hub/check_repo.h"
#include "tracker/hub/link_pager.h"
#include "tracker/hub/listing_pages.h"
#include "tracker/hub/repo_id.h"
#include "tracker/hub/resolve_answer.h"
#include "tracker/hub/url.h"

namespace hubwatch::hub {
namespace {

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
  ExchangeRequest request;
  request.kind = kind;
  request.use_etag_cache = use_etag_cache;
  request.redirects = RedirectPolicy::kRefuseOffOrigin;
  request.accept_compressed = true;
  request.timeout = options_.api_timeout;
  request.max_body_bytes = options_.max_api_body_bytes;
  request.headers.Add("Accept", "application/json");
  LinkPager::Start(*runner_, std::move(request), std::move(first_url), std::move(on_page),
                   std::move(on_done));
}

void HubClient::Refs(const std::string& repo, bool include_prs, HubCallback<RepoRefs> done) {
  if (!CheckRepo(*deps_.clock, repo, done)) return;
  auto refs = std::make_shared<std::optional<RepoRefs>>();
  Paged(RequestKind::kRefs, ApiUrl(repo, include_prs ? "/refs?include_prs=1" : "/refs"),
        RefsPage(refs), [refs, done](std::optional<HubError> error, const CallStats& stats) {
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
  Paged(RequestKind::kCommits, std::move(url), CommitsPages(list, options),
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
  Paged(RequestKind::kTree, std::move(url), TreePages(entries),
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
  Paged(RequestKind::kModelInfo, url + query, ModelInfoPage(info),
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
      RequestKind::kListModels, std::move(url), ModelListPages(models, std::move(options)),
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
                 done(ResolvedFileOf(*result, url), *stats);
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
  runner_->Run(std::move(request), stats.get(),
               [stats, done, url, limit](HubResult<ExchangeResponse> result) {
                 if (!result.ok()) return done(result.error(), *stats);
                 done(FileContentOf(std::move(result).value(), url, limit), *stats);
               });
}
}  // namespace hubwatch::hub
