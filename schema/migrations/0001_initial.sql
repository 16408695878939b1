-- hubwatch store, version 1. Applied once, in a transaction, when PRAGMA user_version < 1.
-- Times are Unix seconds (UTC) unless a column says RFC 3339. JSON columns hold JSON text.

-- Tracked repositories and their polling state.
CREATE TABLE repos (
  id                 TEXT PRIMARY KEY,            -- "google/gemma-2-9b-it"
  refs               TEXT NOT NULL,               -- JSON array of tracked refs: ["main"]
  state              TEXT NOT NULL DEFAULT 'ok'
                       CHECK (state IN ('ok', 'gated', 'renamed', 'deleted', 'disabled', 'erroring')),
  state_detail       TEXT NOT NULL DEFAULT '',    -- the last error or the reason for the state
  renamed_to         TEXT,                        -- set when state = 'renamed'
  added_at           INTEGER NOT NULL,
  last_polled_at     INTEGER,
  next_poll_at       INTEGER NOT NULL DEFAULT 0,
  consecutive_errors INTEGER NOT NULL DEFAULT 0
) STRICT;

-- The last head seen per tracked ref: the poller's cursor.
CREATE TABLE ref_heads (
  repo       TEXT NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
  ref        TEXT NOT NULL,
  sha        TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (repo, ref)
) STRICT;

-- Every revision ingested, oldest first within a repo (ingest_order).
CREATE TABLE revisions (
  repo           TEXT NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
  sha            TEXT NOT NULL,
  parents        TEXT NOT NULL,                   -- JSON array of parent shas
  authored_at    TEXT NOT NULL DEFAULT '',        -- RFC 3339, from the Hub
  title          TEXT NOT NULL DEFAULT '',
  message        TEXT NOT NULL DEFAULT '',
  authors        TEXT NOT NULL DEFAULT '[]',      -- JSON array of user names
  refs           TEXT NOT NULL DEFAULT '[]',      -- JSON array: tracked refs that reached it
  first_seen_at  INTEGER NOT NULL,
  ingest_order   INTEGER NOT NULL,
  rewritten_away INTEGER NOT NULL DEFAULT 0,      -- 1: no longer in the history of any ref
  PRIMARY KEY (repo, sha)
) STRICT;
CREATE INDEX revisions_by_order ON revisions (repo, ingest_order);

-- The files of a revision (recursive tree).
CREATE TABLE manifests (
  repo       TEXT NOT NULL,
  sha        TEXT NOT NULL,
  path       TEXT NOT NULL,
  oid        TEXT NOT NULL,                       -- git blob oid
  size       INTEGER NOT NULL,
  lfs_sha256 TEXT,                                -- LFS files only
  PRIMARY KEY (repo, sha, path),
  FOREIGN KEY (repo, sha) REFERENCES revisions(repo, sha) ON DELETE CASCADE
) STRICT;

-- Contents of tracked small files, content-addressed by git oid (shared across repos).
CREATE TABLE blobs (
  oid     TEXT PRIMARY KEY,
  content BLOB NOT NULL
) STRICT;

-- Parsed safetensors headers, by the weight file's LFS sha256: the tensor list as JSON
-- {name: {"dtype", "shape"}} plus its totals.
CREATE TABLE safetensors_headers (
  sha256   TEXT PRIMARY KEY,
  tensors  TEXT NOT NULL,
  count    INTEGER NOT NULL,
  elements INTEGER NOT NULL
) STRICT;

-- Explained changes per revision, in the order the pipeline found them.
CREATE TABLE changes (
  id         INTEGER PRIMARY KEY,
  repo       TEXT NOT NULL,
  sha        TEXT NOT NULL,
  ordinal    INTEGER NOT NULL,
  kind       TEXT NOT NULL,
  impact     TEXT NOT NULL CHECK (impact IN ('cosmetic', 'behavioral', 'breaking')),
  path       TEXT NOT NULL DEFAULT '',
  summary    TEXT NOT NULL,
  details    TEXT NOT NULL,                       -- JSON
  created_at INTEGER NOT NULL,
  UNIQUE (repo, sha, ordinal),
  FOREIGN KEY (repo, sha) REFERENCES revisions(repo, sha) ON DELETE CASCADE
) STRICT;
CREATE INDEX changes_by_kind ON changes (repo, kind);

-- The estimate of a revision (estimate JSON, hubwatch.estimate/1) and its key figures.
CREATE TABLE estimates (
  repo               TEXT NOT NULL,
  sha                TEXT NOT NULL,
  estimate           TEXT NOT NULL,
  params_total       INTEGER NOT NULL,
  params_active      INTEGER NOT NULL,
  kv_bytes_per_token REAL NOT NULL,
  parameter_delta    INTEGER,                     -- against the headers; NULL without headers
  PRIMARY KEY (repo, sha),
  FOREIGN KEY (repo, sha) REFERENCES revisions(repo, sha) ON DELETE CASCADE
) STRICT;

-- One OSV record per advised change. seq orders the feed (SSE ids, Atom).
CREATE TABLE advisories (
  id        TEXT PRIMARY KEY,                     -- x_HUBWATCH-...
  seq       INTEGER NOT NULL UNIQUE,
  repo      TEXT NOT NULL,
  sha       TEXT NOT NULL,
  change_id INTEGER NOT NULL REFERENCES changes(id) ON DELETE CASCADE,
  kind      TEXT NOT NULL,
  osv       TEXT NOT NULL,                        -- the OSV JSON
  published TEXT NOT NULL,                        -- RFC 3339 UTC, ...Z
  modified  TEXT NOT NULL,
  withdrawn TEXT
) STRICT;
CREATE INDEX advisories_by_repo ON advisories (repo, seq);

-- Deliveries to do, written in the same transaction as the advisory they deliver.
CREATE TABLE outbox (
  id              INTEGER PRIMARY KEY,
  advisory_id     TEXT NOT NULL REFERENCES advisories(id) ON DELETE CASCADE,
  target          TEXT NOT NULL,                  -- subscription id or channel
  state           TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL DEFAULT 0,
  last_error      TEXT NOT NULL DEFAULT '',
  created_at      INTEGER NOT NULL,
  UNIQUE (advisory_id, target)
) STRICT;
CREATE INDEX outbox_pending ON outbox (state, next_attempt_at);

-- HTTP validators for conditional requests (If-None-Match), per URL.
CREATE TABLE http_cache (
  url       TEXT PRIMARY KEY,
  etag      TEXT NOT NULL,
  body      BLOB NOT NULL,
  stored_at INTEGER NOT NULL
) STRICT;
