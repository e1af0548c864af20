-- Webhook delivery (issue 3): an outbox of events written in the same transaction as the state
-- change that caused them, one outbox row per (event, endpoint), and a log row per attempt.
-- Times are Unix milliseconds, as in 001.

-- Retries are opt-in per endpoint (spec: none by default).
ALTER TABLE webhook_endpoints ADD COLUMN retries_enabled INTEGER NOT NULL DEFAULT 0;

-- The event exactly as sent: `payload` holds the serialized envelope, the bytes every attempt signs.
CREATE TABLE webhook_events (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  type TEXT NOT NULL,
  session_id TEXT,
  payload TEXT NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX webhook_events_workspace ON webhook_events(workspace_id, created_at);
-- One event of a kind per session: a repeated outcome report or a second sweeper enqueues nothing.
CREATE UNIQUE INDEX webhook_events_once_per_session ON webhook_events(session_id, type) WHERE session_id IS NOT NULL;

-- What is still to be sent. A dispatcher claims due rows by setting a lease; a row whose lease
-- lapsed (its dispatcher died) is claimable again.
CREATE TABLE webhook_outbox (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id TEXT NOT NULL REFERENCES webhook_events(id),
  endpoint_id TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'dropped')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  lease_owner TEXT,
  lease_until INTEGER,
  updated_at INTEGER NOT NULL,
  UNIQUE (event_id, endpoint_id)
) STRICT;
CREATE INDEX webhook_outbox_due ON webhook_outbox(next_attempt_at) WHERE state = 'pending';

-- Every attempt (spec: webhook_deliveries). `seq` orders and pages the log; `id` is public.
CREATE TABLE webhook_deliveries (
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
  outcome TEXT NOT NULL CHECK (outcome IN ('delivered', 'retry_scheduled', 'dropped')),
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX webhook_deliveries_workspace ON webhook_deliveries(workspace_id, seq);
