#pragma once

// Standard Webhooks v1.0.0, symmetric scheme: a secret is 24-64 random
// bytes shown as "whsec_<base64>"; the HMAC key is the decoded bytes; the signature of one
// attempt is "v1,<base64 HMAC-SHA256(key, webhook-id "." webhook-timestamp "." body)>" over the
// exact body bytes sent. Pure functions on OpenSSL; safe from any thread. Errors never contain
// a secret or a signature.

#include <cstdint>
#include <string>
#include <string_view>

#include "estimator/base/result.h"

namespace hubwatch::subscriptions {

inline constexpr std::string_view kSecretPrefix = "whsec_";
inline constexpr int64_t kDefaultToleranceS = 300;  // the reference libraries' +-5 minutes

// A new secret: 32 bytes from OpenSSL's CSPRNG, as whsec_<base64>.
Result<std::string> GenerateSecret();

// The HMAC key of `secret`: the base64 after "whsec_", decoded; 24 to 64 bytes.
Result<std::string> ParseSecret(std::string_view secret);

// The webhook-signature value for one attempt. REQUIRES: `key` came from ParseSecret.
std::string Sign(std::string_view key, std::string_view id, int64_t timestamp,
                 std::string_view body);

// A receiver's check: `timestamp` (the webhook-timestamp header) is an integer within
// tolerance_s of `now`, and one "v1,<base64>" entry of the space-separated `signatures`
// matches, compared in constant time.
Status Verify(std::string_view secret, std::string_view id, std::string_view timestamp,
              std::string_view body, std::string_view signatures, int64_t now,
              int64_t tolerance_s = kDefaultToleranceS);

// The webhook-id of the delivery of `advisory_id` to `target`: "msg_" and 32 hex digits of
// SHA-256(advisory_id "\n" target). The same on every retry and after a restart; no '.'.
std::string WebhookId(std::string_view advisory_id, std::string_view target);

// RFC 4648 base64 with padding. Decode rejects anything else (whitespace included).
std::string Base64Encode(std::string_view bytes);
Result<std::string> Base64Decode(std::string_view text);

}  // namespace hubwatch::subscriptions
