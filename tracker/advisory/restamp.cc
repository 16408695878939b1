#include "tracker/advisory/restamp.h"

#include "tracker/advisory/time_text.h"

namespace hubwatch::advisory {

std::optional<nlohmann::json> Restamp(nlohmann::json osv, int64_t published_at,
                                      int64_t ingested_at) {
  if (!osv.is_object()) return std::nullopt;
  const auto specific = osv.find("database_specific");
  if (specific != osv.end() && !specific->is_object()) return std::nullopt;
  const std::string when = Rfc3339(published_at);
  osv["published"] = when;
  osv["modified"] = when;
  osv["database_specific"]["ingested_at"] = Rfc3339(ingested_at);
  return osv;
}

}  // namespace hubwatch::advisory
