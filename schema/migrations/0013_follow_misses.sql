-- hubwatch store, version 13: a follow rule untracks a repo only once two complete walks of its
-- listing in a row did not show it (one walk's miss may be a flaky page, or a listing not yet
-- consistent), and a repo is one repo whatever the letter case of its id (the Hub resolves ids
-- without regard to it).

-- The complete walks of its rule in a row that did not show it; 0 once one does (or it is
-- tracked again).
ALTER TABLE follows ADD COLUMN missed INTEGER NOT NULL DEFAULT 0;

-- A repo by its id in any letter case (`id = ? COLLATE NOCASE`): a rule tracking or matching a
-- repo listed in other letters than those it is stored under.
CREATE INDEX repos_by_id_nocase ON repos (id COLLATE NOCASE);
