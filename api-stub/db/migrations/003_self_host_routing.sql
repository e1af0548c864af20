-- Connect routing (issue 3): per-workspace self-host settings and the route each session used.

-- pipeline_token_sealed is an envelope (api-stub/crypto/envelope.ts), never the plaintext token.
ALTER TABLE workspaces ADD COLUMN pipeline_endpoint TEXT;
ALTER TABLE workspaces ADD COLUMN pipeline_token_sealed TEXT;

-- 'hosted' or 'self_hosted': which bearer the worker's outcome report must carry.
ALTER TABLE sessions ADD COLUMN route TEXT CHECK (route IN ('hosted', 'self_hosted'));
-- Why the pipeline failed, when the worker reported a failure (the session itself stays STARTED).
ALTER TABLE sessions ADD COLUMN failed_at INTEGER;
ALTER TABLE sessions ADD COLUMN failure_reason TEXT;
