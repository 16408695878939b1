#include "tracker/pipeline/revision_fetch.h"

#include <memory>

namespace hubwatch::pipeline {
namespace {

class Fetch : public std::enable_shared_from_this<Fetch> {
 public:
  explicit Fetch(std::function<void(FetchedRevision)> done) : done_(std::move(done)) {}

  void Start(hub::HubClient& hub, store::Store& store, const std::string& repo,
             const std::string& sha, const std::vector<hub::TreeEntry>& tree,
             const Snapshot* base) {
    out_.snapshot.sha = sha;
    out_.snapshot.manifest = ManifestFromTree(tree);
    StoredContent stored;
    stored.blob = [&store](const std::string& oid) { return store.revisions().GetBlob(oid); };
    stored.header = [&store](const std::string& id) { return store.revisions().GetHeader(id); };
    Result<FetchPlan> plan = PlanFetches(base, out_.snapshot, stored);
    if (!plan.ok()) {
      out_.local_error = plan.error().message;
      return End();
    }
    pending_ = plan->blobs.size() + plan->headers.size();
    if (pending_ == 0) return End();
    auto self = shared_from_this();
    for (const BlobFetch& f : plan->blobs) {
      hub.ResolveGet(repo, sha, f.path,
                     [self, f](hub::HubResult<hub::FileContent> r, const hub::CallStats& s) {
                       self->Fetched(s, r, [&] {
                         RecordBlob(f, std::move(r), self->out_.snapshot, self->out_.fresh);
                       });
                     });
    }
    for (const HeaderFetch& f : plan->headers) {
      hub.ReadSafetensorsHeader(
          repo, sha, f.path,
          [self, f](hub::HubResult<hub::SafetensorsHeaderInfo> r, const hub::CallStats& s) {
            self->Fetched(s, r, [&] {
              RecordHeader(f, std::move(r), self->out_.snapshot, self->out_.fresh);
            });
          });
    }
  }

 private:
  // One fetch done: an error about the repo ends the fetch; otherwise `record` keeps what it
  // brought, and the last one ends it.
  template <class T>
  void Fetched(const hub::CallStats& s, const hub::HubResult<T>& r,
               const std::function<void()>& record) {
    if (!done_) return;  // ended by an earlier error
    AddStats(out_.stats, s);
    if (!r.ok() && !IsContentProblem(r.error().kind)) {
      out_.hub_error = r.error();
      return End();
    }
    record();
    if (--pending_ == 0) End();
  }

  void End() {
    if (auto done = std::exchange(done_, nullptr)) done(std::move(out_));
  }

  std::function<void(FetchedRevision)> done_;
  FetchedRevision out_;
  size_t pending_ = 0;
};

}  // namespace

void FetchRevision(hub::HubClient& hub, store::Store& store, const std::string& repo,
                   const std::string& sha, const std::vector<hub::TreeEntry>& tree,
                   const Snapshot* base, std::function<void(FetchedRevision)> done) {
  std::make_shared<Fetch>(std::move(done))->Start(hub, store, repo, sha, tree, base);
}

void AddStats(hub::CallStats& total, const hub::CallStats& s) {
  total.requests += s.requests;
  total.retries += s.retries;
  total.redirects += s.redirects;
  total.not_modified += s.not_modified;
  total.bytes_sent += s.bytes_sent;
  total.bytes_received += s.bytes_received;
  total.waited += s.waited;
}

}  // namespace hubwatch::pipeline
