#pragma once

// DiffSnapshots: every change between two revisions, from all the diff engines, in a stable
// order (files, config, generation config, tokenizer, chat template, special tokens, weights,
// processor), plus an `error` change for each tracked file whose new content could not be
// read. Pure function; thread-safe.

#include <vector>

#include "tracker/diff/change.h"
#include "tracker/pipeline/snapshot.h"

namespace hubwatch::pipeline {

// `before` null: the first revision seen (everything is new; a config.json that appears is
// reported as added).
std::vector<diff::Change> DiffSnapshots(const Snapshot* before, const Snapshot& after);

}  // namespace hubwatch::pipeline
