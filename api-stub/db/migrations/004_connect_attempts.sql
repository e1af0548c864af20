-- Retry after a failure (docs/connect.md): a connect after the worker reported a failure opens a new
-- attempt, which may complete, or fail and fire its own interview.failed.
ALTER TABLE sessions ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhook_events ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
-- Still one event of a kind per session, now per attempt: completed and expired keep attempt 0.
DROP INDEX webhook_events_once_per_session;
CREATE UNIQUE INDEX webhook_events_once_per_attempt ON webhook_events(session_id, type, attempt) WHERE session_id IS NOT NULL;
