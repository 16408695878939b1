#include "daemon/schedule/repo_ids.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "daemon/schedule/scheduler.h"

namespace hubwatch::schedule {
namespace {

TEST(RepoIds, InternsEachIdOnceAndFindsItByText) {
  RepoIds ids;
  const RepoIds::Index a = ids.Intern("owner-0001/model-00001");
  const RepoIds::Index b = ids.Intern("owner-0002/model-00002");
  EXPECT_NE(a, b);
  EXPECT_EQ(ids.Intern("owner-0001/model-00001"), a);
  EXPECT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids.Name(a), "owner-0001/model-00001");
  EXPECT_EQ(ids.Find("owner-0002/model-00002"), b);
  EXPECT_FALSE(ids.Find("owner-0003/model-00003"));
  EXPECT_FALSE(ids.Find(""));
}

TEST(RepoIds, AReleasedIdIsGoneAndItsIndexReused) {
  RepoIds ids;
  const RepoIds::Index a = ids.Intern("a/one");
  ids.Intern("a/two");
  ids.Release(a);
  EXPECT_FALSE(ids.live(a));
  EXPECT_FALSE(ids.Find("a/one"));
  EXPECT_EQ(ids.size(), 1u);
  const RepoIds::Index c = ids.Intern("a/three");
  EXPECT_EQ(c, a);
  EXPECT_EQ(ids.Name(c), "a/three");
  EXPECT_EQ(ids.Find("a/two"), ids.Intern("a/two"));
}

TEST(RepoIds, ManyIdsAddedAndRemovedMatchAMap) {
  // Past several rehashes and repacks (released text is reclaimed once it outweighs the live).
  RepoIds ids;
  std::map<std::string, RepoIds::Index> model;
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 20000; ++i) {
      const std::string id = "owner-" + std::to_string(i % 997) + "/model-" +
                             std::to_string(round * 100000 + i);
      model[id] = ids.Intern(id);
    }
    for (auto it = model.begin(); it != model.end();) {  // drop about two thirds
      if (it->second % 3 != 0) {
        ids.Release(it->second);
        it = model.erase(it);
      } else {
        ++it;
      }
    }
    ASSERT_EQ(ids.size(), model.size());
    for (const auto& [id, index] : model) {
      ASSERT_EQ(ids.Find(id), index) << id;
      ASSERT_EQ(ids.Name(index), id);
    }
  }
}

TEST(RepoIds, TheSchedulerTracksAHundredThousandReposAndVisitsEachOnce) {
  Scheduler s({.interval_s = 60, .max_concurrent = 8, .quota = 1'000'000});
  for (int i = 0; i < 100000; ++i) {
    s.Track("o-" + std::to_string(i % 1000) + "/m-" + std::to_string(i), 0);
  }
  s.Untrack("o-7/m-7");
  EXPECT_EQ(s.size(), 99999u);
  size_t seen = 0;
  s.ForEach([&](std::string_view id, int64_t at) {
    ++seen;
    EXPECT_NE(id, "o-7/m-7");
    EXPECT_EQ(at, 0);
  });
  EXPECT_EQ(seen, 99999u);
  // Longest due first, ties by id.
  EXPECT_EQ(s.TakeDue(10), (std::vector<std::string>{"o-0/m-0", "o-0/m-1000", "o-0/m-10000",
                                                     "o-0/m-11000", "o-0/m-12000", "o-0/m-13000",
                                                     "o-0/m-14000", "o-0/m-15000"}));
}

TEST(RepoIds, TheSchedulerUntracksTenThousandReposInOneStepAndKeepsItsOrder) {
  // Untracking most of the repos at once (a follow rule removed, an owner deleting its repos)
  // releases their ids and reclaims their text while the poll heap still holds their slots:
  // the heap must never compare a released or reused index by name.
  Scheduler s({.interval_s = 60, .max_concurrent = 1'000'000, .quota = 1'000'000'000});
  std::set<std::pair<int64_t, std::string>> waiting;  // the model: (next poll, id)
  // Ids as long as real ones get (an organisation's and a model's name): many chunks of text,
  // most of them reclaimed by the untracking.
  auto id = [](int i) {
    return "an-organisation-" + std::to_string(i % 97) + "/a-model-with-a-longer-name-" +
           std::to_string(i);
  };
  for (int i = 0; i < 15000; ++i) {
    const int64_t at = 1000 + (i % 10) * 500;  // ties, as batched times make them
    s.Track(id(i), at);
    waiting.insert({at, id(i)});
  }
  // Some are in flight when they are untracked.
  const std::vector<std::string> started = s.TakeDue(1000);
  ASSERT_FALSE(started.empty());
  for (const std::string& repo : started) waiting.erase({1000, repo});
  for (int i = 0; i < 15000; ++i) {
    if (i % 3 == 0) continue;
    s.Untrack(id(i));
    waiting.erase({1000 + (i % 10) * 500, id(i)});
  }
  EXPECT_EQ(s.size(), 5000u);
  for (const std::string& repo : started) {
    if (s.tracked(repo)) s.Untrack(repo);
  }
  // The next polls are taken from the heap that still held the untracked repos' slots.
  std::vector<std::string> order = s.TakeDue(1500);
  std::vector<std::string> expected;
  while (!waiting.empty() && waiting.begin()->first <= 1500) {
    expected.push_back(waiting.begin()->second);
    waiting.erase(waiting.begin());
  }
  ASSERT_EQ(order, expected);
  // New repos reuse the released indexes.
  for (int i = 20000; i < 20500; ++i) {
    const int64_t at = 2000 + i % 37;
    s.Track(id(i), at);
    waiting.insert({at, id(i)});
  }
  ASSERT_EQ(s.size() - order.size(), waiting.size());
  for (const auto& entry : waiting) expected.push_back(entry.second);
  for (int64_t now = 2000; now <= 7000 && order.size() < expected.size(); now += 500) {
    for (std::string& repo : s.TakeDue(now)) order.push_back(std::move(repo));
  }
  EXPECT_EQ(order, expected);
}

}  // namespace
}  // namespace hubwatch::schedule
