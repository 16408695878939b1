-- hubwatch store, version 5: where a tracked repo came from. 'config': the configuration file
-- lists it, and a start or a reload whose configuration no longer lists it untracks it;
-- 'api': added through POST /api/v1/repos (or tracked before version 5, when nobody recorded
-- it), left alone by the configuration.

ALTER TABLE repos ADD COLUMN source TEXT NOT NULL DEFAULT 'api' CHECK (source IN ('config', 'api'));
