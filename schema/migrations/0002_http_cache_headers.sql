-- hubwatch store, version 2: the HTTP cache keeps the headers of the cached 200 (JSON array of
-- [name, value] pairs), so a 304 can be answered as the original response was.
ALTER TABLE http_cache ADD COLUMN headers TEXT NOT NULL DEFAULT '[]';
