-- hubwatch store, version 9: derivatives that spam cannot crowd out (issue 28). What the Hub
-- says of each derivative that throwaway repos lack - its downloads (the last 30 days), likes
-- and creation date, as last listed or read by its own request - ranks the derivatives when more
-- are found than followed. fixes_through is the seq of upstream's newest fix (advisories.seq)
-- when its lags were classified: a derivative whose lags predate upstream's newest fix is
-- unchecked, never fixed, until a round classifies it again. Before version 9 a derivative's
-- lags covered at most the newest fix they name.
-- derivative_evictions: the derivatives a round stopped following and why (the newest 100 per
-- upstream are kept).

ALTER TABLE derivatives ADD COLUMN downloads INTEGER NOT NULL DEFAULT 0;
ALTER TABLE derivatives ADD COLUMN likes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE derivatives ADD COLUMN created_at TEXT NOT NULL DEFAULT '';  -- '': unknown
ALTER TABLE derivatives ADD COLUMN fixes_through INTEGER NOT NULL DEFAULT 0;
UPDATE derivatives SET fixes_through = COALESCE((
  SELECT MAX(a.seq) FROM derivative_lags l JOIN advisories a ON a.id = l.advisory_id
  WHERE l.upstream = derivatives.upstream AND l.derivative = derivatives.id), 0);

CREATE TABLE derivative_evictions (
  seq        INTEGER PRIMARY KEY,
  upstream   TEXT NOT NULL REFERENCES repos(id) ON DELETE CASCADE,
  id         TEXT NOT NULL,                     -- the derivative repo
  relation   TEXT NOT NULL CHECK (relation IN ('finetune', 'adapter', 'quantized', 'merge')),
  reason     TEXT NOT NULL
               CHECK (reason IN ('ranked_out', 'unlisted', 'not_found', 'untagged')),
  detail     TEXT NOT NULL,                     -- one line: what decided it
  downloads  INTEGER NOT NULL,
  likes      INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  evicted_at INTEGER NOT NULL                   -- Unix seconds
) STRICT;
CREATE INDEX derivative_evictions_by_upstream ON derivative_evictions (upstream, seq);
