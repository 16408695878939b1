// The default configuration that `cmake --install` puts at /etc/hubwatch/hubwatch.json.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "daemon/config/config.h"
#include "daemon/subscriptions/config_sync.h"

namespace hubwatch::subscriptions {
namespace {

TEST(DefaultConfig, IsAcceptedAndHoldsNoSecrets) {
  Result<config::DaemonConfig> c = config::LoadConfig(HUBWATCH_DEFAULT_CONFIG);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->store, "/var/lib/hubwatch/hubwatch.db");  // the unit's StateDirectory
  EXPECT_EQ(c->api.listen, "127.0.0.1:8437");
  EXPECT_FALSE(c->hub.token_file.has_value());
  EXPECT_FALSE(c->api.admin_token_file.has_value());
  EXPECT_FALSE(c->webhooks.allow_private_targets);
  EXPECT_EQ(c->webhooks.retry_for_s, 3 * 24 * 3600);
  EXPECT_TRUE(LoadConfigSubscriptions(c->subscriptions, c->webhooks).ok());
  std::ifstream in(HUBWATCH_DEFAULT_CONFIG);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str().find("whsec_"), std::string::npos);
  EXPECT_EQ(text.str().find("secret"), std::string::npos);
}

}  // namespace
}  // namespace hubwatch::subscriptions
