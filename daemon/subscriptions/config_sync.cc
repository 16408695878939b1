#include "daemon/subscriptions/config_sync.h"

#include <set>

#include "daemon/subscriptions/matcher.h"
#include "daemon/subscriptions/signature.h"
#include "daemon/subscriptions/target_policy.h"

namespace hubwatch::subscriptions {
Result<std::vector<store::Subscription>> LoadConfigSubscriptions(
    const std::vector<config::SubscriptionConfig>& entries, const config::WebhookConfig& webhooks) {
  std::vector<store::Subscription> out;
  std::set<std::string> urls;
  for (size_t i = 0; i < entries.size(); ++i) {
    const config::SubscriptionConfig& e = entries[i];
    const std::string where = "subscriptions[" + std::to_string(i) + "]";
    if (Status s = CheckTargetUrl(e.url, webhooks.allow_private_targets); !s.ok()) {
      return Error::InvalidInput(where + ".url: " + s.error().message);
    }
    if (!urls.insert(e.url).second) {
      return Error::InvalidInput(where + ".url: another subscription has the same URL");
    }
    if (Status s = CheckFilters(e.repos, e.kinds, e.min_impact); !s.ok()) {
      return Error::InvalidInput(where + ": " + s.error().message);
    }
    Result<std::string> secret = config::ReadSecretFile(e.secret_file, where + ".secret_file");
    if (!secret.ok()) return secret.error();
    if (Result<std::string> key = ParseSecret(*secret); !key.ok()) {
      return Error::InvalidInput(where + ".secret_file: " +
                                 config::QuoteForError(e.secret_file, config::kMaxQuotedPath) +
                                 ": " + key.error().message);
    }
    store::Subscription s;
    s.url = e.url;
    s.secret = std::move(*secret);
    s.repos = e.repos;
    s.kinds = e.kinds;
    s.min_impact = *diff::ParseImpact(e.min_impact);  // CheckFilters accepted it
    s.backfill = e.backfill;
    s.source = store::Source::kConfig;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace hubwatch::subscriptions
