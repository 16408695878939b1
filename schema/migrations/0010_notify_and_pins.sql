-- hubwatch store, version 10 (issue 34): notification apart from publication, and pins.
-- Every advisory is published (the OSV database, the feeds), but a webhook subscription is sent
-- the advisories of changes committed before their repo was tracked (history) only when it asks
-- for them with backfill. A repo's pins are the revisions its users run: the repo list, its page
-- and its badge count the advisories that affect each.

ALTER TABLE subscriptions ADD COLUMN backfill INTEGER NOT NULL DEFAULT 0;  -- 1: history too
ALTER TABLE repos ADD COLUMN pins TEXT NOT NULL DEFAULT '[]';  -- JSON array of revisions (7-40 hex)
-- When the repo's first good poll ended: until then every poll is its first catch-up, whose
-- commits from before added_at are history (a catch-up a crash cut short resumes as such).
ALTER TABLE repos ADD COLUMN caught_up_at INTEGER;
UPDATE repos SET caught_up_at = COALESCE(last_polled_at, added_at)
  WHERE EXISTS (SELECT 1 FROM ref_heads WHERE ref_heads.repo = repos.id);
