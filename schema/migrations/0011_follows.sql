-- hubwatch store, version 11 (issue 33): follow rules. A rule names an owner (or a listing
-- threshold) and the repos it matches are tracked from the listing round that first shows them:
-- from their head at that moment (a baseline, no advisory) unless the rule asks for backfill.
-- A repo that stops matching is untracked and its history kept (repos.tracked = 0).

-- The rules: from the configuration ('config', synced at start and on reload) or the admin API.
CREATE TABLE follow_rules (
  name       TEXT PRIMARY KEY,              -- "Qwen", "Qwen/Qwen3*", or the name it was given
  source     TEXT NOT NULL CHECK (source IN ('config', 'api')),
  spec       TEXT NOT NULL,                 -- the rule as JSON (what it selects and brings)
  created_at INTEGER NOT NULL,
  walked_at  INTEGER NOT NULL DEFAULT 0     -- the last complete walk of its listing; 0: never
) STRICT;

-- The repos a rule brought. A repo brought by no rule (configuration, API) has no row.
CREATE TABLE follows (
  repo       TEXT PRIMARY KEY REFERENCES repos(id) ON DELETE CASCADE,
  rule       TEXT NOT NULL,                 -- follow_rules.name (kept when the rule goes)
  tracked_at INTEGER NOT NULL,
  matched_at INTEGER NOT NULL               -- the last listing that showed it matching
) STRICT;
CREATE INDEX follows_by_rule ON follows (rule, matched_at);

-- "tracked" and "untracked" events, for the stream, the feed and subscriptions, in order.
CREATE TABLE follow_events (
  seq    INTEGER PRIMARY KEY AUTOINCREMENT,
  repo   TEXT NOT NULL,
  kind   TEXT NOT NULL CHECK (kind IN ('tracked', 'untracked')),
  rule   TEXT NOT NULL,
  sha    TEXT NOT NULL DEFAULT '',          -- the head the listing showed ('' when unknown)
  reason TEXT NOT NULL DEFAULT '',          -- why untracked
  at     INTEGER NOT NULL
) STRICT;
CREATE INDEX follow_events_by_time ON follow_events (at);

-- 0: untracked (a followed repo that stopped matching): never polled, its history kept.
ALTER TABLE repos ADD COLUMN tracked INTEGER NOT NULL DEFAULT 1;
-- 1: its first poll records the head it finds as the baseline (no history, no advisory).
ALTER TABLE repos ADD COLUMN baseline INTEGER NOT NULL DEFAULT 0;

-- The follow events a webhook subscription asked for (its kinds name "tracked" or "untracked"),
-- delivered as the outbox's advisories are (DeliveryQueue reads both).
CREATE TABLE follow_outbox (
  id              INTEGER PRIMARY KEY,
  event_seq       INTEGER NOT NULL REFERENCES follow_events(seq) ON DELETE CASCADE,
  subscription_id INTEGER NOT NULL,
  state           TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL DEFAULT 0,
  last_error      TEXT NOT NULL DEFAULT '',
  last_status     INTEGER,
  last_attempt_at INTEGER,
  delivered_at    INTEGER,
  created_at      INTEGER NOT NULL,
  UNIQUE (event_seq, subscription_id)
) STRICT;
CREATE INDEX follow_outbox_pending ON follow_outbox (state, next_attempt_at);
