-- The api-stub's first schema: workspaces own keys, deployments and webhook endpoints;
-- sessions belong to a deployment. Times are Unix milliseconds (INTEGER); the API renders them
-- as ISO 8601 UTC seconds. JSON columns hold text produced by JSON.stringify.

CREATE TABLE workspaces (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;

-- Keys are stored as SHA-256 hashes: a leaked database file does not leak secret keys.
-- `hint` keeps the prefix and last four characters for humans (e.g. `sk_...ab12`).
CREATE TABLE api_keys (
  key_hash TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  kind TEXT NOT NULL CHECK (kind IN ('publishable', 'secret')),
  mode TEXT NOT NULL CHECK (mode IN ('test', 'live')),
  hint TEXT NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX api_keys_workspace ON api_keys(workspace_id);

CREATE TABLE deployments (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  status TEXT NOT NULL CHECK (status IN ('ACTIVE', 'DRAFT', 'PAUSED', 'ARCHIVED')),
  expires_at INTEGER,
  -- The interview definition the bot needs: title, language, intro, questions, closing.
  interview_json TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX deployments_workspace ON deployments(workspace_id);

CREATE TABLE webhook_endpoints (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  url TEXT NOT NULL,
  -- A JSON array of `whsec_` secrets; every delivery is signed with each (rotation).
  secrets_json TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (workspace_id, url)
) STRICT;

CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  deployment_id TEXT NOT NULL REFERENCES deployments(id),
  status TEXT NOT NULL CHECK (status IN ('PENDING', 'SENT', 'CLICKED', 'STARTED', 'COMPLETED', 'EXPIRED')),
  metadata_json TEXT NOT NULL,
  url TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  sent_at INTEGER,
  clicked_at INTEGER,
  started_at INTEGER,
  completed_at INTEGER,
  expired_at INTEGER,
  updated_at INTEGER NOT NULL
) STRICT;
-- The expiry sweeper looks for live sessions whose time has passed.
CREATE INDEX sessions_live_expiry ON sessions(expires_at) WHERE status NOT IN ('COMPLETED', 'EXPIRED');

-- The response record of a completed interview (spec: `response` nested in a retrieved session).
CREATE TABLE responses (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL UNIQUE REFERENCES sessions(id),
  status TEXT NOT NULL,
  transcript_key TEXT NOT NULL,
  summary TEXT NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;

-- Idempotency-Key on session creation: the same key and body within the TTL return the first session.
CREATE TABLE idempotency_keys (
  workspace_id TEXT NOT NULL REFERENCES workspaces(id),
  idempotency_key TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  created_at INTEGER NOT NULL,
  PRIMARY KEY (workspace_id, idempotency_key)
) STRICT, WITHOUT ROWID;
CREATE INDEX idempotency_keys_created ON idempotency_keys(created_at);

-- Fixed-window request counters per workspace, kept in the file so caps survive a restart.
CREATE TABLE rate_counters (
  workspace_id TEXT NOT NULL,
  window_kind TEXT NOT NULL CHECK (window_kind IN ('hour', 'second')),
  window_start INTEGER NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (workspace_id, window_kind, window_start)
) STRICT, WITHOUT ROWID;
