// LruCache, as BasisCache: computed once per key, the least recently used dropped, failures not
// kept, and a weighed cache bounded by what its values weigh.

#include <gtest/gtest.h>

#include "daemon/page/basis_cache.h"

namespace hubwatch::page {
namespace {

BasisCache::Compute Counting(int* calls, std::string reason) {
  return [calls, reason] {
    ++*calls;
    RevisionBasis e;
    e.unavailable = reason;
    return Result<RevisionBasis>(std::move(e));
  };
}

TEST(BasisCache, ComputesOncePerRevisionAndKeepsTheMostRecent) {
  BasisCache cache(2);
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

TEST(BasisCache, AFailureIsReturnedAndNotKept) {
  BasisCache cache(4);
  int calls = 0;
  auto failing = [&calls] {
    ++calls;
    return Result<RevisionBasis>(Error::Io("store: disk I/O error"));
  };
  auto r = cache.Get("o/m@aaa", failing);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("disk I/O"), std::string::npos);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_TRUE(cache.Get("o/m@aaa", Counting(&calls, "ok")).ok());
  EXPECT_EQ(calls, 2);
}

TEST(BasisCache, AWeighedCacheKeepsWhatFitsItsBytesAndNeverOneThatAloneOutweighsThem) {
  RevisionBasis one;
  one.unavailable = std::string(1000, 'x');
  const size_t w = one.ApproxBytes();  // what each value below weighs
  const size_t capacity = 2 * w + w / 2;
  std::shared_ptr<BasisCache> cache = MakeBasisCache(capacity);
  int calls = 0;
  auto sized = [&calls](size_t bytes) {
    return [&calls, bytes] {
      ++calls;
      RevisionBasis b;
      b.unavailable = std::string(bytes, 'x');
      return Result<RevisionBasis>(std::move(b));
    };
  };
  ASSERT_TRUE(cache->Get("a", sized(1000)).ok());
  ASSERT_TRUE(cache->Get("b", sized(1000)).ok());
  EXPECT_EQ(cache->size(), 2u);
  EXPECT_EQ(cache->weight(), 2 * w);
  ASSERT_TRUE(cache->Get("c", sized(1000)).ok());  // a, b and c outweigh it: a goes
  EXPECT_EQ(cache->weight(), 2 * w);
  EXPECT_EQ(cache->Find("a"), nullptr);
  EXPECT_NE(cache->Find("c"), nullptr);
  // One value heavier than the whole cache is returned, not kept, and evicts nothing.
  auto big = cache->Get("big", sized(3 * w));
  ASSERT_TRUE(big.ok());
  EXPECT_EQ((*big)->unavailable.size(), 3 * w);
  EXPECT_EQ(cache->Find("big"), nullptr);
  EXPECT_NE(cache->Find("c"), nullptr);
  EXPECT_EQ(calls, 4);
}

}  // namespace
}  // namespace hubwatch::page
