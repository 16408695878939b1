#pragma once

// Shared by the unit tests of the pipeline's steps: a SQLite store in memory that tracks one
// repo, and a change built from its parts.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tracker/diff/change.h"
#include "tracker/store/store.h"

namespace hubwatch::pipeline {

// A store in memory that tracks `repo` on its main branch; null (with a test failure) when it
// cannot be opened.
inline std::unique_ptr<store::Store> MemoryStoreTracking(const std::string& repo) {
  auto s = store::Store::Open(":memory:");
  EXPECT_TRUE(s.ok()) << s.error().message;
  if (!s.ok()) return nullptr;
  EXPECT_TRUE((*s)->repos().AddRepo({.id = repo, .refs = {"main"}}).ok());
  return std::move(s).value();
}

inline diff::Change MakeChange(diff::ChangeKind kind, diff::Impact impact, std::string path,
                               std::string summary = "something moved") {
  diff::Change c;
  c.kind = kind;
  c.impact = impact;
  c.path = std::move(path);
  c.summary = std::move(summary);
  return c;
}

}  // namespace hubwatch::pipeline
