-- hubwatch store, version 3: webhook subscriptions, and delivery bookkeeping on the outbox.

-- Webhook targets. Config subscriptions are synced from the config file at start and on
-- reload (one per URL); API subscriptions are created and removed through the admin API.
-- AUTOINCREMENT: an id is never reused, because outbox targets ("subscription:<id>") name it.
CREATE TABLE subscriptions (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  url             TEXT NOT NULL,                  -- http(s) target, checked by the URL policy
  secret          TEXT NOT NULL,                  -- whsec_<base64>: never logged, never listed
  repos           TEXT NOT NULL DEFAULT '*',      -- glob over repo ids
  kinds           TEXT NOT NULL DEFAULT '[]',     -- JSON array of change kinds; [] = every kind
  min_impact      TEXT NOT NULL DEFAULT 'behavioral'
                    CHECK (min_impact IN ('cosmetic', 'behavioral', 'breaking')),
  source          TEXT NOT NULL CHECK (source IN ('config', 'api')),
  disabled_at     INTEGER,                        -- set when the receiver answered 410 Gone
  disabled_reason TEXT NOT NULL DEFAULT '',
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL
) STRICT;
CREATE UNIQUE INDEX subscriptions_config_url ON subscriptions (url) WHERE source = 'config';

-- The subscription an outbox row goes to, derived from its target; NULL for other targets.
ALTER TABLE outbox ADD COLUMN subscription_id INTEGER
  GENERATED ALWAYS AS (CASE WHEN target GLOB 'subscription:[0-9]*'
                            THEN CAST(substr(target, 14) AS INTEGER) END) VIRTUAL;
ALTER TABLE outbox ADD COLUMN last_attempt_at INTEGER;  -- Unix seconds; NULL: never tried
ALTER TABLE outbox ADD COLUMN last_status INTEGER;      -- HTTP status; NULL: no response
ALTER TABLE outbox ADD COLUMN delivered_at INTEGER;
CREATE INDEX outbox_by_subscription ON outbox (subscription_id, state);
