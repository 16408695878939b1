#pragma once

// The Hub client: the calls a revision poller needs, with the Hub's exact semantics. Every call
// is asynchronous: its callback runs exactly once, later, on the loop thread, with a HubResult
// (value or typed HubError) and the CallStats of that call.
//
//   Refs            GET  /api/models/{id}/refs
//   Commits         GET  /api/models/{id}/commits/{rev}      paged by Link rel="next"
//   Tree            GET  /api/models/{id}/tree/{rev}[/{path}] paged by cursor links
//   GetModelInfo    GET  /api/models/{id}[/revision/{rev}]   expand=..., blobs
//   ListModels      GET  /api/models?sort=&author=&expand=  paged by Link
//   ResolveHead     HEAD /{id}/resolve/{rev}/{path}          no auto-follow; identity headers
//   ResolveGet      GET  /{id}/resolve/{rev}/{path}          follows; token never leaves the Hub
//   ReadSafetensorsHeader  Range reads of a .safetensors file, header validated
//   ReadGgufMetadata       Range reads of a .gguf file's key-value metadata, bounded
//
// API GETs and resolve GETs go through the ETag cache when one is given.
//
// Thread safety: one loop thread. REQUIRES: the dependencies in HubClientDeps outlive the
// client. Destroying the client (or Shutdown) fails pending calls with kShutdown.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "estimator/base/random.h"
#include "estimator/formats/gguf_header.h"
#include "tracker/hub/accounting.h"
#include "tracker/hub/asio_clock.h"
#include "tracker/hub/backoff.h"
#include "tracker/hub/etag_cache.h"
#include "tracker/hub/exchange.h"
#include "tracker/hub/hub_error.h"
#include "tracker/hub/hub_settings.h"
#include "tracker/hub/hub_types.h"
#include "tracker/hub/transport.h"

namespace hubwatch::hub {

// The most of a GGUF file read for its metadata (the Hub's own reader stops at 50 MB), and the
// first read (a Llama 3 vocabulary and merges take about 7 MiB).
inline constexpr uint64_t kHardMaxGgufMetadataBytes = 64ull << 20;
inline constexpr uint64_t kFirstGgufReadBytes = 8ull << 20;

// What ReadGgufMetadata read.
struct GgufMetadataInfo {
  GgufMetadata metadata;
  uint64_t file_size = 0;  // from Content-Range
  uint64_t bytes_read = 0;
  ResolvedFile file;
  int range_reads = 0;
};

template <class T>
using HubCallback = std::function<void(HubResult<T>, const CallStats&)>;

struct HubClientOptions {
  HubSettings settings;
  RetryPolicy retry;
  std::string user_agent;  // default "hubwatch/<version>"
  std::chrono::milliseconds api_timeout{30'000};
  std::chrono::milliseconds head_timeout{10'000};  // HF_HUB_ETAG_TIMEOUT's default
  std::chrono::milliseconds download_timeout{120'000};
  uint64_t max_api_body_bytes = 64ull << 20;
  uint64_t max_download_bytes = 64ull << 20;  // ResolveGet refuses larger files
  // Safetensors headers longer than this are refused; capped at 100,000,000 whatever is set.
  uint64_t max_safetensors_header_bytes = 25'000'000;
  // GGUF metadata longer than this is refused; capped at kHardMaxGgufMetadataBytes.
  uint64_t max_gguf_metadata_bytes = kHardMaxGgufMetadataBytes;
  int max_redirects = 5;
  LogSink log;  // lines never hold the token
};

struct HubClientDeps {
  Transport* transport = nullptr;
  TimerClock* clock = nullptr;
  Random* random = nullptr;
  EtagCache* etag_cache = nullptr;  // optional
};

struct CommitsOptions {
  int page_size = 0;       // 0: the server's default (50); the Hub allows up to 1000
  size_t max_commits = 0;  // 0: all
  std::string stop_at;     // stop (exclusive) at this commit id: "what is new since"
};

struct TreeOptions {
  std::string path;  // "" for the root
  bool recursive = false;
  bool expand = false;  // lastCommit (and pages of 50)
};

struct ModelInfoOptions {
  std::optional<std::string> revision;  // none: /api/models/{id}
  std::vector<std::string> expand;      // sent as repeated expand=
  bool blobs = false;
};

// GET /api/models, newest first by `sort` (the Hub refuses ascending order: no `direction` is
// sent), following Link rel="next" verbatim (the cursor is opaque).
struct ListModelsOptions {
  std::string author;                 // one user or org; "": the whole Hub
  std::string search;                 // substring of the id
  std::vector<std::string> filter;    // tags, all required: "base_model:finetune:{id}"
  std::string sort = "lastModified";  // camelCase, as on the wire
  std::vector<std::string> expand;    // sent as repeated expand=; only these and `id` come back
  int page_size = 0;                  // limit=; 0: the server's default
  size_t max_results = 0;             // 0: all pages
  // Called per item in order; once it returns true no further page is read (the listing is
  // read down to a watermark). Unset: read on.
  std::function<bool(const ModelSummary&)> last_wanted;
};

class HubClient {
 public:
  HubClient(HubClientOptions options, HubClientDeps deps);
  ~HubClient();
  HubClient(const HubClient&) = delete;
  HubClient& operator=(const HubClient&) = delete;

  void Refs(const std::string& repo, bool include_prs, HubCallback<RepoRefs> done);
  void Commits(const std::string& repo, const std::string& revision, CommitsOptions options,
               HubCallback<CommitList> done);
  void Tree(const std::string& repo, const std::string& revision, TreeOptions options,
            HubCallback<std::vector<TreeEntry>> done);
  void GetModelInfo(const std::string& repo, ModelInfoOptions options, HubCallback<ModelInfo> done);
  void ListModels(ListModelsOptions options, HubCallback<std::vector<ModelSummary>> done);
  void ResolveHead(const std::string& repo, const std::string& revision, const std::string& path,
                   HubCallback<ResolvedFile> done);
  // use_etag_cache false: for files read once per commit (a derivative's at a new head), whose
  // bodies the cache would only keep.
  void ResolveGet(const std::string& repo, const std::string& revision, const std::string& path,
                  HubCallback<FileContent> done, bool use_etag_cache = true);
  void ReadSafetensorsHeader(const std::string& repo, const std::string& revision,
                             const std::string& path, HubCallback<SafetensorsHeaderInfo> done);
  void ReadGgufMetadata(const std::string& repo, const std::string& revision,
                        const std::string& path, HubCallback<GgufMetadataInfo> done);

  // URL builders (exposed for tests and logs).
  std::string ApiUrl(const std::string& repo, const std::string& suffix) const;
  std::string ResolveUrl(const std::string& repo, const std::string& revision,
                         const std::string& path) const;

  const Accounting& accounting() const { return accounting_; }
  // The Hub's last word on a bucket ("api", "resolvers"), for pacing and status pages.
  BucketStatus bucket_status(const std::string& bucket) const {
    return runner_->bucket_status(bucket);
  }
  const HubClientOptions& options() const { return options_; }
  void Shutdown();

 private:
  void Paged(RequestKind kind, std::string first_url,
             std::function<bool(const ExchangeResponse&, std::optional<HubError>*)> on_page,
             std::function<void(std::optional<HubError>, const CallStats&)> on_done,
             bool use_etag_cache = true);

  HubClientOptions options_;
  HubClientDeps deps_;
  Accounting accounting_;
  std::unique_ptr<ExchangeRunner> runner_;
};

// The production wiring: CurlTransport, Asio clock, system random and an in-memory ETag cache,
// owned together. REQUIRES: io outlives the stack.
class HubStack {
 public:
  HubStack(boost::asio::io_context& io, HubClientOptions options);
  // With a caller's ETag cache (the store's) instead of an in-memory one.
  HubStack(boost::asio::io_context& io, HubClientOptions options, std::unique_ptr<EtagCache> cache);
  ~HubStack();
  HubClient& client() { return *client_; }

 private:
  std::unique_ptr<Transport> transport_;
  std::unique_ptr<TimerClock> clock_;
  std::unique_ptr<Random> random_;
  std::unique_ptr<EtagCache> cache_;
  std::unique_ptr<HubClient> client_;
};

}  // namespace hubwatch::hub
