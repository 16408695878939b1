-- hubwatch store, version 10 (issue 34): notification apart from publication, and pins.
-- Every advisory is published (the OSV database, the feeds), but a webhook subscription is sent
-- the advisories of changes committed before their repo was tracked (history) only when it asks
-- for them with backfill. A repo's pins are the revisions its users run: the repo list, its page
-- and its badge count the advisories that affect each.

ALTER TABLE subscriptions ADD COLUMN backfill INTEGER NOT NULL DEFAULT 0;  -- 1: history too
ALTER TABLE repos ADD COLUMN pins TEXT NOT NULL DEFAULT '[]';  -- JSON array of revisions (7-40 hex)
