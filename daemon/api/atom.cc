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

}  // namespace

std::string RenderAtomFeed(const std::vector<store::AdvisoryRecord>& newest_first,
                           const AtomOptions& options) {
  std::string updated = advisory::Rfc3339(options.now);
  if (!newest_first.empty()) {
    updated = newest_first.front().modified;
    for (const store::AdvisoryRecord& a : newest_first) updated = std::max(updated, a.modified);
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
  for (const store::AdvisoryRecord& a : newest_first) {
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
