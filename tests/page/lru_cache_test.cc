// LruCache, as EstimateCache: computed once per key, the least recently used dropped, failures not
// kept.

#include <gtest/gtest.h>

#include "daemon/page/estimate_cache.h"

namespace hubwatch::page {
namespace {

EstimateCache::Compute Counting(int* calls, std::string reason) {
  return [calls, reason] {
    ++*calls;
    RevisionEstimate e;
    e.unavailable = reason;
    return Result<RevisionEstimate>(std::move(e));
  };
}

TEST(EstimateCache, ComputesOncePerRevisionAndKeepsTheMostRecent) {
  EstimateCache cache(2);
  int calls = 0;
  auto a = cache.Get("o/m@aaa", Counting(&calls, "a"));
  ASSERT_TRUE(a.ok());
  EXPECT_EQ((*a)->unavailable, "a");
  EXPECT_EQ((*cache.Get("o/m@aaa", Counting(&calls, "other")))->unavailable, "a");
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(cache.Get("o/m@bbb", Counting(&calls, "b")).ok());
  EXPECT_TRUE(cache.Get("o/m@aaa", Counting(&calls, "a")).ok());  // a is now the most recent
  EXPECT_TRUE(cache.Get("o/m@ccc", Counting(&calls, "c")).ok());  // drops b
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_TRUE(cache.Get("o/m@aaa", Counting(&calls, "a")).ok());
  EXPECT_EQ(calls, 3);
  EXPECT_TRUE(cache.Get("o/m@bbb", Counting(&calls, "b")).ok());
  EXPECT_EQ(calls, 4);
  // Same sha in another repo is another entry.
  EXPECT_EQ((*cache.Get("o/other@aaa", Counting(&calls, "x")))->unavailable, "x");
}

TEST(EstimateCache, AFailureIsReturnedAndNotKept) {
  EstimateCache cache(4);
  int calls = 0;
  auto failing = [&calls] {
    ++calls;
    return Result<RevisionEstimate>(Error::Io("store: disk I/O error"));
  };
  auto r = cache.Get("o/m@aaa", failing);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("disk I/O"), std::string::npos);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_TRUE(cache.Get("o/m@aaa", Counting(&calls, "ok")).ok());
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace hubwatch::page
