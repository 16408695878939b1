#include "tracker/hub/listing_pages.h"

#include "tracker/hub/hub_json.h"
#include "tracker/hub/url.h"

namespace hubwatch::hub {
namespace {

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

}  // namespace

LinkPager::OnPage RefsPage(std::shared_ptr<std::optional<RepoRefs>> out) {
  return [out](const ExchangeResponse& page, std::optional<HubError>* error) {
    HubResult<RepoRefs> parsed = ParseRefsJson(page.response.body, page.final_url);
    if (!parsed.ok()) {
      *error = parsed.error();
    } else {
      *out = std::move(parsed).value();
      (*out)->repo_id = RepoIdOfApiUrl(page.final_url);
    }
    return false;
  };
}

LinkPager::OnPage CommitsPages(std::shared_ptr<CommitList> out, CommitsOptions options) {
  return [list = std::move(out), options](const ExchangeResponse& page,
                                          std::optional<HubError>* error) {
    HubResult<std::vector<CommitInfo>> parsed =
        ParseCommitsJson(page.response.body, page.final_url);
    if (!parsed.ok()) {
      *error = parsed.error();
      return false;
    }
    if (list->pages++ == 0) {
      if (auto total = page.response.headers.Get("X-Total-Count")) {
        list->total_count = ParseHeaderNumber(*total);
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
  };
}

LinkPager::OnPage TreePages(std::shared_ptr<std::vector<TreeEntry>> out) {
  return [entries = std::move(out)](const ExchangeResponse& page, std::optional<HubError>* error) {
    HubResult<std::vector<TreeEntry>> parsed = ParseTreeJson(page.response.body, page.final_url);
    if (!parsed.ok()) {
      *error = parsed.error();
      return false;
    }
    for (TreeEntry& e : parsed.value()) entries->push_back(std::move(e));
    return true;
  };
}

LinkPager::OnPage ModelInfoPage(std::shared_ptr<std::optional<ModelInfo>> out) {
  return [info = std::move(out)](const ExchangeResponse& page, std::optional<HubError>* error) {
    HubResult<ModelInfo> parsed = ParseModelInfoJson(page.response.body, page.final_url);
    if (!parsed.ok())
      *error = parsed.error();
    else
      *info = std::move(parsed).value();
    return false;
  };
}

LinkPager::OnPage ModelListPages(std::shared_ptr<std::vector<ModelSummary>> out,
                                 ListModelsOptions options) {
  return [models = std::move(out), o = std::move(options)](const ExchangeResponse& page,
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
  };
}

}  // namespace hubwatch::hub
