-- hubwatch store, version 6: change hints. A poll is started by the schedule ('poll' with hints
-- off, 'reconcile' with them on), by the Hub's model listing ('listing') or by a Hub webhook
-- ('webhook'). A repo keeps how its last new revision was found and when it was last reconciled.
-- The listing's watermark: the newest lastModified (Unix seconds) read down to, per source
-- ('feed': the Hub-wide listing; 'owner:NAME': one owner's), so a restart reads on from there.

ALTER TABLE repos ADD COLUMN last_reconciled_at INTEGER;
ALTER TABLE repos ADD COLUMN last_change_found_by TEXT
  CHECK (last_change_found_by IN ('poll', 'reconcile', 'listing', 'webhook'));

CREATE TABLE listing_watermarks (
  source        TEXT PRIMARY KEY,
  covered_until INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL
) STRICT;
