-- hubwatch store, version 8: derivatives (issue 18). The fine-tunes, adapters, quantizations and
-- merges the Hub links to a tracked ("upstream") repo, each with its last check, and where each
-- stands on every behavioral fix upstream published. A derivative that lags on a fix gets an
-- advisory of its own (in advisories: repo = the derivative, change_id = the upstream change),
-- named in its lag row; it is kept, and updated, once the derivative catches up.

CREATE TABLE derivatives (
  upstream      TEXT NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
  id            TEXT NOT NULL,                    -- the derivative repo
  relation      TEXT NOT NULL CHECK (relation IN ('finetune', 'adapter', 'quantized', 'merge')),
  head          TEXT NOT NULL DEFAULT '',         -- the commit its lags were read at; '': never
  last_modified TEXT NOT NULL DEFAULT '',         -- RFC 3339, as the Hub's listing gave it
  listed_at     INTEGER NOT NULL,                 -- the last listing that showed it
  checked_at    INTEGER NOT NULL DEFAULT 0,       -- the last check; 0: never
  facets        TEXT NOT NULL DEFAULT '{}',       -- JSON: what the check read (opaque here)
  error         TEXT NOT NULL DEFAULT '',         -- '': the last check read it; else why not
  PRIMARY KEY (upstream, id)
) STRICT;

-- One row per upstream advisory a derivative was checked against, as of its last check.
CREATE TABLE derivative_lags (
  upstream               TEXT NOT NULL,
  derivative             TEXT NOT NULL,
  advisory_id            TEXT NOT NULL REFERENCES advisories(id) ON DELETE CASCADE,
  status                 TEXT NOT NULL
                           CHECK (status IN ('fixed', 'lagging', 'diverged', 'not_applicable')),
  derivative_advisory_id TEXT REFERENCES advisories(id) ON DELETE SET NULL,
  updated_at             INTEGER NOT NULL,
  PRIMARY KEY (upstream, derivative, advisory_id),
  FOREIGN KEY (upstream, derivative) REFERENCES derivatives(upstream, id) ON DELETE CASCADE
) STRICT;
-- CountsByAdvisory and the cascades from advisories.
CREATE INDEX derivative_lags_by_advisory ON derivative_lags (advisory_id, status);
CREATE INDEX derivative_lags_by_own_advisory ON derivative_lags (derivative_advisory_id)
  WHERE derivative_advisory_id IS NOT NULL;
