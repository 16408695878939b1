#include "daemon/api/atom.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "daemon/api/badge.h"
#include "daemon/api/xml_text.h"
#include "tracker/advisory/osv.h"

namespace hubwatch::api {
namespace {

// tag: URIs (RFC 4151) keep entry ids stable whatever host serves the feed.
constexpr const char kTagPrefix[] = "tag:hubwatch,2024:";

// History (committed before the repo was tracked): published, but not news.
bool IsBackfill(const nlohmann::json& osv) {
  const auto specific = osv.find("database_specific");
  if (specific == osv.end() || !specific->is_object()) return false;
  const auto backfill = specific->find("backfill");
  return backfill != specific->end() && backfill->is_boolean() && backfill->get<bool>();
}

std::string Text(const nlohmann::json& osv, const char* key) {
  if (!osv.is_object() || !osv.contains(key) || !osv[key].is_string()) return "";
  return osv[key].get<std::string>();
}

void Element(std::string& out, const char* name, const std::string& text,
             const char* attributes = "") {
  out += "<";
  out += name;
  out += attributes;
  out += ">" + XmlEscape(text) + "</" + name + ">\n";
}

void Link(std::string& out, const char* rel, const char* type, const std::string& href) {
  out += "<link rel=\"";
  out += rel;
  out += "\" type=\"";
  out += type;
  out += "\" href=\"" + XmlEscape(href) + "\"/>\n";
}

void FollowEntry(std::string& out, const store::FollowEvent& e, const AtomOptions& options) {
  const bool tracked = e.kind == "tracked";
  out += "<entry>\n";
  Element(out, "id", std::string(kTagPrefix) + "follow/" + std::to_string(e.seq));
  Element(out, "title",
          std::string(tracked ? "Tracked " : "Untracked ") + e.repo + " (follow rule " + e.rule +
              ")");
  Element(out, "updated", advisory::Rfc3339(e.at));
  Element(out, "published", advisory::Rfc3339(e.at));
  Link(out, "related", "text/html", options.hub_url + "/" + e.repo);
  out += tracked ? "<category term=\"tracked\" label=\"a follow rule tracked it\"/>\n"
                 : "<category term=\"untracked\" label=\"a follow rule untracked it\"/>\n";
  Element(out, "content",
          tracked ? "hubwatch tracks " + e.repo + " from " +
                        (e.sha.empty() ? std::string("its head") : e.sha) + ", brought by follow rule " +
                        e.rule + "."
                  : "hubwatch no longer tracks " + e.repo + " (" + e.reason +
                        "); its history is kept.",
          " type=\"text\"");
  out += "</entry>\n";
}

}  // namespace

std::string RenderAtomFeed(const std::vector<store::AdvisoryRecord>& newest_first,
                           const AtomOptions& options,
                           const std::vector<store::FollowEvent>& follows, size_t limit) {
  // Both lists merged by time, newest first: (time, advisory index or -1 - follow index).
  std::vector<std::pair<std::string, long>> order;
  for (size_t i = 0; i < newest_first.size(); ++i) {
    order.emplace_back(newest_first[i].published, static_cast<long>(i));
  }
  for (size_t i = 0; i < follows.size(); ++i) {
    order.emplace_back(advisory::Rfc3339(follows[i].at), -1 - static_cast<long>(i));
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  if (limit > 0 && order.size() > limit) order.resize(limit);
  std::string updated = advisory::Rfc3339(options.now);
  if (!order.empty()) {
    updated = order.front().first;
    for (const auto& [time, index] : order) {
      updated = std::max(updated, index >= 0 ? newest_first[static_cast<size_t>(index)].modified
                                             : time);
    }
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n";
  out += "<feed xmlns=\"http://www.w3.org/2005/Atom\">\n";
  Element(
      out, "id",
      std::string(kTagPrefix) + "advisories" + (options.scope.empty() ? "" : "/" + options.scope));
  Element(out, "title",
          "hubwatch advisories" + (options.scope.empty() ? "" : " (" + options.scope + ")"));
  Element(out, "subtitle", "Changes to tracked Hugging Face model repositories, as OSV records");
  Element(out, "updated", updated);
  out += "<author><name>hubwatch</name></author>\n";
  Element(out, "generator", "hubwatch");
  Link(out, "self", "application/atom+xml", options.self_url);
  for (const auto& [time, index] : order) {
    if (index < 0) {
      FollowEntry(out, follows[static_cast<size_t>(-1 - index)], options);
      continue;
    }
    const store::AdvisoryRecord& a = newest_first[static_cast<size_t>(index)];
    out += "<entry>\n";
    Element(out, "id", std::string(kTagPrefix) + "advisory/" + a.id);
    std::string title = Text(a.osv, "summary");
    Element(out, "title", title.empty() ? a.id : title);
    Element(out, "updated", a.modified);
    Element(out, "published", a.published);
    Link(out, "alternate", "application/json", options.base_url + "/v1/vulns/" + a.id);
    Link(out, "related", "text/html", options.hub_url + "/" + a.repo + "/commit/" + a.sha);
    out += "<category term=\"" + XmlEscape(a.kind) + "\" label=\"" + XmlEscape(KindLabel(a.kind)) +
           "\"/>\n";
    if (IsBackfill(a.osv)) {
      out += "<category term=\"backfill\" label=\"committed before the repo was tracked\"/>\n";
    }
    if (a.withdrawn) Element(out, "summary", "Withdrawn " + *a.withdrawn, " type=\"text\"");
    Element(out, "content", Text(a.osv, "details"), " type=\"text\"");
    out += "</entry>\n";
  }
  out += "</feed>\n";
  return out;
}

}  // namespace hubwatch::api
