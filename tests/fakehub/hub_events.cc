// fakehub's changes as events: pushes (in-process and POST /_fakehub/repos/{id}/commit), renames
// and deletions, main heads landing on the replay clock, and the Hub-format webhook payloads
// they produce (reference §8):
//   a new main head   {"event":{"action":"update","scope":"repo.content"},"repo":{...,
//                     "headSha":NEW},"webhook":{...},"updatedRefs":[{"ref":"refs/heads/main",
//                     "oldSha":OLD or null,"newSha":NEW}]}
//   a rename          {"event":{"action":"move","scope":"repo"},"repo":{"name":OLD,...},
//                     "movedTo":{"name":NEW,"owner":{"id":...}},"webhook":{...}}
//   a deletion        {"event":{"action":"delete","scope":"repo"},"repo":{...},"webhook":{...}}
// "repo" is {"type":"model","name","id" (_id),"private","url":{"web","api"},"headSha","owner":
// {"id"}}; owner ids are derived from the owner's name. A repo's first head (a repo appearing on
// the replay clock) is an update with oldSha null. Churn repos send nothing.

#include <nlohmann/json.hpp>

#include "tests/fakehub/hashing.h"
#include "tests/fakehub/hub_state.h"

namespace hubwatch::fakehub {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

std::string OwnerId(const std::string& repo_id) {
  return Sha1Hex("owner " + repo_id.substr(0, repo_id.find('/'))).substr(0, 24);
}

bool BadPath(const std::string& path) {
  return path.empty() || path.starts_with('/') || path.ends_with('/') ||
         path.find("//") != std::string::npos ||
         ("/" + path + "/").find("/../") != std::string::npos ||
         ("/" + path + "/").find("/./") != std::string::npos;
}

ordered_json RepoJson(const std::string& origin, const Repo& repo, const std::string& name,
                      int head) {
  return {{"type", "model"},
          {"name", name},
          {"id", repo.internal_id},
          {"private", repo.is_private},
          {"url", {{"web", origin + "/" + name}, {"api", origin + "/api/models/" + name}}},
          {"headSha", head < 0 ? ordered_json(nullptr)
                               : ordered_json(repo.commits[static_cast<size_t>(head)].id)},
          {"owner", {{"id", OwnerId(name)}}}};
}

ordered_json WebhookJson(const std::string& url) {
  return {{"id", Sha1Hex("webhook " + url).substr(0, 24)}, {"version", 3}};
}

}  // namespace

void HubState::SetWebhookSink(std::function<void(std::string)> sink) {
  std::lock_guard lock(mutex_);
  webhook_sink_ = std::move(sink);
  for (size_t i = 0; i < repos_.size(); ++i) notified_head_[i] = MainHead(repos_[i]);
}

void HubState::Tick() {
  std::lock_guard lock(mutex_);
  NoteHeadChanges();
}

void HubState::AppendLog(LoggedRequest entry) {
  std::lock_guard lock(mutex_);
  entry.seq = next_seq_++;
  log_.push_back(std::move(entry));
}

void HubState::Emit(std::string payload) {
  if (webhook_sink_) webhook_sink_(std::move(payload));
}

// Without a sink nothing is reported and the heads are recorded when one is set.
void HubState::NoteHeadChanges() {
  if (!webhook_sink_) return;
  for (size_t i = 0; i < repos_.size(); ++i) {
    const Repo& repo = repos_[i];
    if (repo.deleted) continue;
    const int head = MainHead(repo);
    if (head < 0 || head == notified_head_[i]) continue;
    const int old = notified_head_[i];
    notified_head_[i] = head;
    ordered_json ref = {{"ref", "refs/heads/main"}, {"oldSha", nullptr}, {"newSha", nullptr}};
    if (old >= 0) ref["oldSha"] = repo.commits[static_cast<size_t>(old)].id;
    ref["newSha"] = repo.commits[static_cast<size_t>(head)].id;
    ordered_json payload = {{"event", {{"action", "update"}, {"scope", "repo.content"}}},
                            {"repo", RepoJson(hub_origin_, repo, repo.id, head)},
                            {"webhook", WebhookJson(options_.webhook_url)},
                            {"updatedRefs", ordered_json::array({ref})}};
    Emit(payload.dump());
  }
}

Status HubState::PushLocked(Repo& repo, const std::map<std::string, std::string>& files,
                            const std::vector<std::string>& removed, const std::string& title,
                            const std::string& message, std::string* new_sha) {
  const int head = MainHead(repo);
  if (head < 0) return Error::InvalidInput(repo.id + " has no visible commit yet");
  if (files.empty() && removed.empty()) return Error::InvalidInput("a push changes no file");
  NoteHeadChanges();  // what landed before, reported before the push
  const Commit& parent = repo.commits[static_cast<size_t>(head)];
  auto tree = std::make_shared<FileMap>(*parent.files);
  for (const auto& [path, text] : files) {
    if (BadPath(path)) return Error::InvalidInput("bad path \"" + path + "\"");
    (*tree)[path] = MakeInlineBlob(text);
  }
  for (const std::string& path : removed) {
    if (!tree->erase(path))
      return Error::InvalidInput("deletes " + path + ", which does not exist");
  }
  Commit commit;
  commit.title = !title.empty()      ? title
                 : files.size() == 1 ? "Upload " + files.begin()->first
                                     : "Upload files with huggingface_hub";
  commit.message = message;
  commit.authors = {"fakehub-push"};
  commit.time = std::max(CommitNow(), parent.time);
  commit.date = FormatIsoTime(commit.time);
  commit.parent = head;
  commit.files = std::move(tree);
  commit.id = Sha1Hex("push\n" + repo.id + "\n" + parent.id + "\n" + commit.title + "\n" +
                      commit.date + "\n" + std::to_string(repo.commits.size()));
  if (new_sha != nullptr) *new_sha = commit.id;
  repo.commits.push_back(std::move(commit));
  const int index = static_cast<int>(repo.commits.size() - 1);
  if (repo.main_override >= 0) {
    repo.main_override = index;
  } else {
    // Replay commits after the head have not landed; main moves on without them.
    auto at = std::find(repo.main_history.begin(), repo.main_history.end(), head);
    repo.main_history.erase(at + 1, repo.main_history.end());
    repo.main_history.push_back(index);
  }
  NoteHeadChanges();
  return Status::Ok();
}

Status HubState::RenameLocked(const std::string& from, const std::string& to) {
  Repo* repo = FindRepoById(from);
  if (repo == nullptr) return Error::InvalidInput("no repo " + from);
  if (to.empty() || to.find('/') == std::string::npos)
    return Error::InvalidInput("rename to \"" + to + "\": not namespace/name");
  if (FindRepoById(to) != nullptr) return Error::InvalidInput(to + " exists");
  NoteHeadChanges();
  repo->renamed_from.push_back(repo->id);
  repo->id = to;
  if (!webhook_sink_) return Status::Ok();
  ordered_json payload = {{"event", {{"action", "move"}, {"scope", "repo"}}},
                          {"repo", RepoJson(hub_origin_, *repo, from, MainHead(*repo))},
                          {"movedTo", {{"name", to}, {"owner", {{"id", OwnerId(to)}}}}},
                          {"webhook", WebhookJson(options_.webhook_url)}};
  Emit(payload.dump());
  return Status::Ok();
}

Status HubState::DeleteLocked(const std::string& id) {
  Repo* repo = FindRepoById(id);
  if (repo == nullptr) return Error::InvalidInput("no repo " + id);
  NoteHeadChanges();
  repo->deleted = true;
  if (!webhook_sink_) return Status::Ok();
  ordered_json payload = {{"event", {{"action", "delete"}, {"scope", "repo"}}},
                          {"repo", RepoJson(hub_origin_, *repo, id, MainHead(*repo))},
                          {"webhook", WebhookJson(options_.webhook_url)}};
  Emit(payload.dump());
  return Status::Ok();
}

// POST /_fakehub/repos/{namespace}/{name}/commit
//   {"files": {"config.json": "<text>"}, "delete": ["old.txt"], "title": "...", "message": "...",
//    "model": {"pipeline_tag": "...", "library_name": "...", "tags": [...], "downloads": N,
//              "likes": N}}
// 200 {"commit": SHA, "date": ISO, "repo": ID, "created": BOOL}. A repo that does not exist is
// created by it, as an upload creates one on the Hub: its first commit ("initial commit" unless
// titled) holds the files, dated now, so that it lists at the top of its owner's listing and the
// Hub-wide feed and sends a webhook (oldSha null). "model" sets what the listing shows of the
// repo (its filters and counts), on a new repo or an existing one. 400 for a bad body.
FakeResponse HubState::PushControl(const FakeRequest& request) {
  constexpr std::string_view kPrefix = "/_fakehub/repos/", kSuffix = "/commit";
  const std::string id = PercentDecode(
      std::string_view(request.path)
          .substr(kPrefix.size(), request.path.size() - kPrefix.size() - kSuffix.size()));
  json body = json::parse(request.body, nullptr, false);
  if (!body.is_object()) return JsonError(400, "", "body is not a JSON object");
  std::map<std::string, std::string> files;
  std::vector<std::string> removed;
  std::string title, message;
  try {
    if (body.contains("files")) {
      if (!body["files"].is_object()) return JsonError(400, "", "\"files\" must be an object");
      for (const auto& [path, text] : body["files"].items()) {
        if (!text.is_string())
          return JsonError(400, "", "file " + path + ": content must be a string");
        files[path] = text.get<std::string>();
      }
    }
    if (body.contains("delete")) removed = body["delete"].get<std::vector<std::string>>();
    title = body.value("title", std::string());
    message = body.value("message", std::string());
  } catch (const std::exception& e) {
    return JsonError(400, "", std::string("bad push: ") + e.what());
  }
  Repo* repo = FindRepoById(id);
  const bool created = repo == nullptr;
  std::string sha;
  if (created) {
    Result<Repo*> made = CreateLocked(id, files, title, message);
    if (!made.ok()) return JsonError(400, "", made.error().message);
    repo = *made;
    sha = repo->commits.back().id;
  } else {
    Status pushed = PushLocked(*repo, files, removed, title, message, &sha);
    if (!pushed.ok()) return JsonError(400, "", pushed.error().message);
  }
  if (body.contains("model")) {
    if (Status s = SetListedModel(*repo, body["model"]); !s.ok()) {
      return JsonError(400, "", s.error().message);
    }
  }
  return JsonBody(200, json{{"commit", sha},
                            {"date", repo->commits.back().date},
                            {"repo", repo->id},
                            {"created", created}}
                           .dump());
}

Result<Repo*> HubState::CreateLocked(const std::string& id,
                                     const std::map<std::string, std::string>& files,
                                     const std::string& title, const std::string& message) {
  const size_t slash = id.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == id.size() ||
      id.find('/', slash + 1) != std::string::npos) {
    return Error::InvalidInput("create " + id + ": not namespace/name");
  }
  if (files.empty()) return Error::InvalidInput("create " + id + ": the first commit needs files");
  Repo meta;
  meta.id = id;
  meta.internal_id = Sha1Hex("created " + id).substr(0, 24);
  const int64_t now = CommitNow();
  meta.created_at = FormatIsoTime(now);
  RepoBuilder builder(std::move(meta));
  RepoBuilder::CommitSpec spec;
  spec.title = title.empty() ? "initial commit" : title;
  spec.message = message;
  spec.authors = {"fakehub-push"};
  spec.date = FormatIsoTime(now);
  for (const auto& [path, text] : files) {
    if (BadPath(path)) return Error::InvalidInput("bad path \"" + path + "\"");
    spec.add[path] = MakeInlineBlob(text);
  }
  if (Status s = builder.AddCommit(std::move(spec)); !s.ok()) return s.error();
  NoteHeadChanges();  // what landed before, reported before the new repo
  repos_.push_back(std::move(builder).Build());
  notified_head_.push_back(-1);  // its first head is reported as new (oldSha null)
  NoteHeadChanges();
  return &repos_.back();
}

Status HubState::SetListedModel(Repo& repo, const json& model) {
  if (!model.is_object()) return Error::InvalidInput("\"model\" must be an object");
  try {
    for (const auto& [key, value] : model.items()) {
      if (key == "pipeline_tag") {
        repo.pipeline_tag = value.get<std::string>();
      } else if (key == "library_name") {
        repo.library_name = value.get<std::string>();
      } else if (key == "tags") {
        repo.tags = value.get<std::vector<std::string>>();
      } else if (key == "downloads") {
        repo.downloads = value.get<uint64_t>();
      } else if (key == "likes") {
        repo.likes = value.get<uint64_t>();
      } else {
        return Error::InvalidInput("\"model\": unknown key \"" + key + "\"");
      }
    }
  } catch (const std::exception& e) {
    return Error::InvalidInput(std::string("\"model\": ") + e.what());
  }
  return Status::Ok();
}

}  // namespace hubwatch::fakehub
