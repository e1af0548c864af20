-- Per-session report credentials (docs/contracts.md, C1): one random token per spawn call, kept only
-- as its SHA-256. A worker's outcome report must carry one issued for that session, so rotating or
-- clearing the workspace's pipeline token never affects sessions already spawned.
CREATE TABLE report_tokens (
  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  attempt INTEGER NOT NULL,
  token_sha256 TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (session_id, token_sha256)
);
