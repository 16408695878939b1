-- hubwatch store, version 7: what the Hub says of a repo beside its files, for the model page:
-- its download count (the Hub's, over the last 30 days), likes and tags, as of hub_info_at
-- (Unix seconds; NULL: never read). Refreshed by a poll about once a day (model info, one
-- request); tags are kept as a JSON array of at most 64 strings.

ALTER TABLE repos ADD COLUMN hub_downloads INTEGER;
ALTER TABLE repos ADD COLUMN hub_likes INTEGER;
ALTER TABLE repos ADD COLUMN hub_tags TEXT;
ALTER TABLE repos ADD COLUMN hub_info_at INTEGER;
