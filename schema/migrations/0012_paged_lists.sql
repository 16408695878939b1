-- hubwatch store, version 12 (issue 33, "Pages that stay small"): the lists a person pages
-- through (the index, the search, /changes, GET /api/v1/repos) read one page of rows through an
-- index, never every repo. Two facts are kept denormalised so that no list needs a subquery per
-- repo or per change; RevisionWriter::Insert keeps them up to date with every revision.
--
-- repos.family: the model_type of the repo's newest estimate (the one LatestEstimate reads: the
--   most recently ingested revision not rewritten away that has one); 'no model_type' when that
--   estimate names none, 'unknown' without an estimate or when it is the unavailable form. At
--   most 100 characters (upstream writes model_type).
-- repos.last_change_at: the newest commit time (Unix seconds; the first-seen time of a revision
--   without one) of a revision of the repo that has a change; NULL: no change yet.
-- changes.committed_at: its revision's commit time, the same way: what "since TIME" compares.
-- repo_families: the families with their counts (below).
ALTER TABLE repos ADD COLUMN family TEXT NOT NULL DEFAULT 'unknown';
ALTER TABLE repos ADD COLUMN last_change_at INTEGER;
ALTER TABLE changes ADD COLUMN committed_at INTEGER NOT NULL DEFAULT 0;

UPDATE changes SET committed_at = COALESCE((
  SELECT COALESCE(CAST(strftime('%s', NULLIF(r.authored_at, '')) AS INTEGER), r.first_seen_at)
  FROM revisions r WHERE r.repo = changes.repo AND r.sha = changes.sha), created_at);
UPDATE repos SET last_change_at = (SELECT MAX(c.committed_at) FROM changes c
                                   WHERE c.repo = repos.id);
UPDATE repos SET family = COALESCE((
  SELECT CASE
    WHEN json_type(e.estimate, '$.params.total') IS NOT 'integer'
      OR json_extract(e.estimate, '$.params.total') < 0
      OR json_type(e.estimate, '$.model') IS NOT 'object'
      OR json_type(e.estimate, '$.model.model_type') IS NOT 'text' THEN 'unknown'
    WHEN json_extract(e.estimate, '$.model.model_type') = '' THEN 'no model_type'
    ELSE substr(json_extract(e.estimate, '$.model.model_type'), 1, 100) END
  FROM estimates e JOIN revisions r ON r.repo = e.repo AND r.sha = e.sha
  WHERE e.repo = repos.id AND r.rewritten_away = 0 AND json_valid(e.estimate)
  ORDER BY r.ingest_order DESC LIMIT 1), 'unknown');

-- How many repos each family has, kept by triggers on repos: the index shows the families with
-- their counts on every page, which would otherwise count every repo per request.
CREATE TABLE repo_families (
  family TEXT PRIMARY KEY,
  repos  INTEGER NOT NULL
) STRICT;
INSERT INTO repo_families (family, repos) SELECT family, count(*) FROM repos GROUP BY family;
CREATE TRIGGER repo_families_insert AFTER INSERT ON repos BEGIN
  INSERT INTO repo_families (family, repos) VALUES (NEW.family, 1)
    ON CONFLICT (family) DO UPDATE SET repos = repos + 1;
END;
CREATE TRIGGER repo_families_delete AFTER DELETE ON repos BEGIN
  UPDATE repo_families SET repos = repos - 1 WHERE family = OLD.family;
  DELETE FROM repo_families WHERE family = OLD.family AND repos <= 0;
END;
CREATE TRIGGER repo_families_update AFTER UPDATE OF family ON repos
  WHEN OLD.family IS NOT NEW.family BEGIN
  UPDATE repo_families SET repos = repos - 1 WHERE family = OLD.family;
  DELETE FROM repo_families WHERE family = OLD.family AND repos <= 0;
  INSERT INTO repo_families (family, repos) VALUES (NEW.family, 1)
    ON CONFLICT (family) DO UPDATE SET repos = repos + 1;
END;

-- The index's family pages, the search's filters, "changed since".
CREATE INDEX repos_by_family ON repos (family, id);
CREATE INDEX repos_by_state ON repos (state, id);
CREATE INDEX repos_by_last_change ON repos (last_change_at);
-- /changes and /api/v1/changes?since=TIME across every repo; a repo's changes by id.
CREATE INDEX changes_by_commit ON changes (committed_at);
CREATE INDEX changes_by_repo ON changes (repo, id);
