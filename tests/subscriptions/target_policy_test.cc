#include "daemon/subscriptions/target_policy.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

namespace hubwatch::subscriptions {
namespace {

std::optional<std::string_view> V6(const char* text) {
  in6_addr a;
  EXPECT_EQ(inet_pton(AF_INET6, text, &a), 1) << text;
  return NonPublicReasonV6(a);
}

TEST(TargetPolicy, PublicHttpAndHttpsUrlsPass) {
  for (const char* url : {"https://hooks.example.com/hubwatch", "http://example.com:8080/x?y=1",
                          "https://93.184.216.34/hook", "https://[2606:4700:4700::1111]/",
                          "https://EXAMPLE.com./", "https://8.8.8.8:443"}) {
    EXPECT_TRUE(CheckTargetUrl(url, false).ok()) << url;
  }
}

TEST(TargetPolicy, OtherSchemesAndMalformedUrlsFailEvenWhenPrivateIsAllowed) {
  for (const char* url :
       {"ftp://example.com/", "file:///etc/passwd", "gopher://example.com/", "example.com/hook",
        "https://", "https://user:pw@example.com/", "https://token@example.com/",
        "https://example.com:0/", "https://example.com:70000/", "https://example.com:x/",
        "https://[::1/", "https://[not-v6]/", "https://exa mple.com/", "https://ex%41mple.com/",
        "https://example.com/\xc3\xa9"}) {
    EXPECT_FALSE(CheckTargetUrl(url, false).ok()) << url;
    EXPECT_FALSE(CheckTargetUrl(url, true).ok()) << url;
  }
}

TEST(TargetPolicy, InnerAddressesFailUnlessAllowed) {
  for (const char* url : {
           "http://127.0.0.1:8080/hook",     // loopback
           "http://127.9.9.9/",              // loopback /8
           "http://localhost/",              // loopback by name
           "http://LOCALHOST./",             // ... in any case, with the root dot
           "http://api.localhost/",          // RFC 6761
           "http://10.1.2.3/",               // private
           "http://172.16.0.1/",             // private
           "http://172.31.255.255/",         // private
           "http://192.168.1.1/",            // private
           "http://100.64.0.1/",             // CGNAT
           "http://169.254.169.254/latest",  // link-local: cloud metadata
           "http://0.0.0.0/",                // unspecified
           "http://2130706433/",             // 127.0.0.1 as one number
           "http://127.1/",                  // short form
           "http://0x7f.0.0.1/",             // hex form
           "http://017700000001/",           // octal form
           "http://224.0.0.1/",              // multicast
           "http://255.255.255.255/",        // broadcast
           "http://[::1]/",                  // IPv6 loopback
           "http://[::]/",                   // IPv6 unspecified
           "http://[::ffff:127.0.0.1]/",     // IPv4-mapped loopback
           "http://[::ffff:10.0.0.1]/",      // IPv4-mapped private
           "http://[::ffff:169.254.169.254]/",
           "http://[fe80::1]/",          // link-local
           "http://[fc00::1]/",          // unique-local
           "http://[fd12:3456::1]/",     // unique-local
           "http://[64:ff9b::7f00:1]/",  // NAT64 of 127.0.0.1
           "http://[2002:7f00:1::]/",    // 6to4 of 127.0.0.1
       }) {
    Status s = CheckTargetUrl(url, false);
    EXPECT_FALSE(s.ok()) << url;
    if (!s.ok()) {
      EXPECT_NE(s.error().message.find("allow_private_targets"), std::string::npos);
    }
    EXPECT_TRUE(CheckTargetUrl(url, true).ok()) << url;
  }
}

TEST(TargetPolicy, ClassifiesIpv4Ranges) {
  auto v4 = [](uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
    return NonPublicReasonV4(a << 24 | b << 16 | c << 8 | d);
  };
  EXPECT_EQ(v4(127, 0, 0, 1), "loopback");
  EXPECT_EQ(v4(10, 255, 0, 1), "private");
  EXPECT_EQ(v4(172, 15, 255, 255), std::nullopt);  // just below 172.16/12
  EXPECT_EQ(v4(172, 32, 0, 0), std::nullopt);      // just above
  EXPECT_EQ(v4(169, 254, 0, 1), "link-local");
  EXPECT_EQ(v4(0, 1, 2, 3), "unspecified");
  EXPECT_EQ(v4(192, 0, 2, 1), "reserved");
  EXPECT_EQ(v4(198, 18, 0, 1), "reserved");
  EXPECT_EQ(v4(239, 1, 1, 1), "multicast");
  EXPECT_EQ(v4(240, 0, 0, 1), "reserved");
  EXPECT_EQ(v4(8, 8, 8, 8), std::nullopt);
  EXPECT_EQ(v4(100, 63, 255, 255), std::nullopt);
  EXPECT_EQ(v4(100, 64, 0, 0), "private");
}

TEST(TargetPolicy, ClassifiesIpv6RangesAndEmbeddedIpv4) {
  EXPECT_EQ(V6("::1"), "loopback");
  EXPECT_EQ(V6("::"), "unspecified");
  EXPECT_EQ(V6("::ffff:127.0.0.1"), "loopback");
  EXPECT_EQ(V6("::ffff:8.8.8.8"), std::nullopt);
  EXPECT_EQ(V6("::7f00:1"), "loopback");       // IPv4-compatible
  EXPECT_EQ(V6("::808:808"), "reserved");      // IPv4-compatible, public inside: still refused
  EXPECT_EQ(V6("64:ff9b::a00:1"), "private");  // NAT64 of 10.0.0.1
  EXPECT_EQ(V6("64:ff9b::808:808"), std::nullopt);
  EXPECT_EQ(V6("64:ff9b:1::1"), "private");
  EXPECT_EQ(V6("2002:a9fe:a9fe::"), "link-local");  // 6to4 of 169.254.169.254
  EXPECT_EQ(V6("2002:808:808::"), std::nullopt);
  EXPECT_EQ(V6("fe80::1"), "link-local");
  EXPECT_EQ(V6("febf::1"), "link-local");
  EXPECT_EQ(V6("fec0::1"), "private");
  EXPECT_EQ(V6("fc00::1"), "unique-local");
  EXPECT_EQ(V6("fdff::1"), "unique-local");
  EXPECT_EQ(V6("ff02::1"), "multicast");
  EXPECT_EQ(V6("2001:db8::1"), "reserved");
  EXPECT_EQ(V6("2001::1"), "reserved");  // Teredo
  EXPECT_EQ(V6("100::1"), "reserved");   // discard, outside 2000::/3
  EXPECT_EQ(V6("2606:4700:4700::1111"), std::nullopt);
  EXPECT_EQ(V6("2a00:1450::1"), std::nullopt);
}

TEST(TargetPolicy, ClassifiesSockaddrs) {
  sockaddr_in in4{};
  in4.sin_family = AF_INET;
  inet_pton(AF_INET, "127.0.0.1", &in4.sin_addr);
  EXPECT_EQ(NonPublicReason(reinterpret_cast<sockaddr*>(&in4), sizeof in4), "loopback");
  inet_pton(AF_INET, "1.1.1.1", &in4.sin_addr);
  EXPECT_EQ(NonPublicReason(reinterpret_cast<sockaddr*>(&in4), sizeof in4), std::nullopt);
  EXPECT_EQ(NonPublicReason(reinterpret_cast<sockaddr*>(&in4), 4), "reserved");  // truncated
  sockaddr_in6 in6{};
  in6.sin6_family = AF_INET6;
  inet_pton(AF_INET6, "::ffff:192.168.0.1", &in6.sin6_addr);
  EXPECT_EQ(NonPublicReason(reinterpret_cast<sockaddr*>(&in6), sizeof in6), "private");
  sockaddr unix_like{};
  unix_like.sa_family = AF_UNIX;
  EXPECT_EQ(NonPublicReason(&unix_like, sizeof unix_like), "reserved");
}

TEST(TargetPolicy, RedactUrlKeepsOnlySchemeAndAuthority) {
  EXPECT_EQ(RedactUrl("https://hooks.slack.com/services/T000/B000/XXXXSECRET?token=abc"),
            "https://hooks.slack.com");
  EXPECT_EQ(RedactUrl("http://user:pw@example.com:8080/x"), "http://example.com:8080");
  EXPECT_EQ(RedactUrl("https://[::1]:9/p"), "https://[::1]:9");
}

}  // namespace
}  // namespace hubwatch::subscriptions
