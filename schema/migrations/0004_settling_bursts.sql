-- hubwatch store, version 4: settling bursts. A burst of upstream commits is ingested as it
-- arrives, but its advisories are held here until the burst settles (no new commit for the
-- settle window); publishing moves them to advisories with the next seq (so feeds and SSE ids
-- stay in publish order) and queues their outbox rows then. Both times are kept.

ALTER TABLE advisories ADD COLUMN ingested_at INTEGER;  -- Unix seconds; NULL: before version 4

CREATE TABLE held_advisories (
  id          TEXT PRIMARY KEY,                   -- x_HUBWATCH-...
  repo        TEXT NOT NULL,
  sha         TEXT NOT NULL,
  change_id   INTEGER NOT NULL REFERENCES changes(id) ON DELETE CASCADE,
  kind        TEXT NOT NULL,
  osv         TEXT NOT NULL,                      -- published/modified are set when published
  targets     TEXT NOT NULL DEFAULT '[]',         -- JSON array: the outbox rows to queue
  ingested_at INTEGER NOT NULL,                   -- Unix seconds
  settle_at   INTEGER NOT NULL                    -- the burst's: the same for a repo's rows
) STRICT;
CREATE INDEX held_by_repo ON held_advisories (repo, settle_at);
