-- The route each spawn took, so that the sessions a workspace holds on the shared hosted capacity
-- can be counted (docs/connect.md, "Hosted sessions per workspace").
ALTER TABLE report_tokens ADD COLUMN route TEXT NOT NULL DEFAULT 'hosted';
CREATE INDEX report_tokens_by_time ON report_tokens(created_at);

-- Publishable-key and secret-key calls get separate budgets (docs/api.md, "Rate caps"): the
-- publishable ones count in windows of their own kinds. The table is rebuilt for the wider CHECK.
CREATE TABLE rate_counters_new (
  workspace_id TEXT NOT NULL,
  window_kind TEXT NOT NULL CHECK (window_kind IN ('hour', 'second', 'pk_hour', 'pk_second')),
  window_start INTEGER NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (workspace_id, window_kind, window_start)
) STRICT, WITHOUT ROWID;
INSERT INTO rate_counters_new SELECT workspace_id, window_kind, window_start, count FROM rate_counters;
DROP TABLE rate_counters;
ALTER TABLE rate_counters_new RENAME TO rate_counters;
