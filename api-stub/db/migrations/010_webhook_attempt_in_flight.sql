-- An attempt is logged before it is sent (outcome 'in_flight') and settled after, so an api-stub
-- killed mid-attempt leaves its row; the next dispatcher marks such a row 'interrupted' when it
-- sends the event again (issue 19). SQLite cannot alter a CHECK constraint: the table is rebuilt.
CREATE TABLE webhook_deliveries_new (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  workspace_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  endpoint_id TEXT NOT NULL,
  endpoint_url TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  status_code INTEGER,
  duration_ms INTEGER NOT NULL,
  error TEXT,
  response_body TEXT,
  outcome TEXT NOT NULL CHECK (outcome IN ('in_flight', 'delivered', 'retry_scheduled', 'dropped', 'interrupted')),
  created_at INTEGER NOT NULL
) STRICT;
INSERT INTO webhook_deliveries_new SELECT * FROM webhook_deliveries;
DROP TABLE webhook_deliveries;
ALTER TABLE webhook_deliveries_new RENAME TO webhook_deliveries;
CREATE INDEX webhook_deliveries_workspace ON webhook_deliveries(workspace_id, seq);
-- The rows of an (event, endpoint) still in flight, found when the event is claimed again.
CREATE INDEX webhook_deliveries_in_flight ON webhook_deliveries(event_id, endpoint_id) WHERE outcome = 'in_flight';
