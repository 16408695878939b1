#pragma once

// The SQL migrations of schema/migrations/, embedded at build time (generated migrations.cc),
// in the order they apply: migration i takes a database from user_version i to i + 1.

#include <span>

namespace hubwatch::store {

struct Migration {
  const char* name;  // "0001_initial.sql"
  const char* sql;
};

std::span<const Migration> Migrations();

}  // namespace hubwatch::store
