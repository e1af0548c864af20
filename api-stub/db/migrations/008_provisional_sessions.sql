-- A session that POST /api/v2/sdk/connect created itself (the spec's body) is provisional until a
-- spawn for it succeeds (docs/session-states.md, "Provisional sessions"): a failed connect names it so
-- that the retry reaches it, and if no connect ever reaches a bot it is deleted at its expiresAt
-- without any webhook. Sessions created by POST /api/v2/sdk/sessions are never provisional.
ALTER TABLE sessions ADD COLUMN provisional INTEGER NOT NULL DEFAULT 0;
