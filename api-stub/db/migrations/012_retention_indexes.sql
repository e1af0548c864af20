-- Retention (issue 41, api-stub/retention): the pruner finds old rows by time, and the delivery log
-- is filtered by event. Without these each query scanned its whole table (100,000 delivery rows: 63 ms
-- for one `?eventId=` page).

-- GET /api/v2/workspace/webhook-deliveries?eventId=: the workspace's rows of one event, newest first.
CREATE INDEX webhook_deliveries_event ON webhook_deliveries(workspace_id, event_id, seq);
-- Delivery-log rows past their retention.
CREATE INDEX webhook_deliveries_created ON webhook_deliveries(created_at);
-- Webhook events past their retention (the older index leads with the workspace).
CREATE INDEX webhook_events_created ON webhook_events(created_at);
-- Finished sessions by the time they finished.
CREATE INDEX sessions_finished_at ON sessions(COALESCE(completed_at, expired_at)) WHERE status IN ('COMPLETED', 'EXPIRED');
-- Deleting a session checks (foreign key) and deletes its idempotency keys: found by session, not by
-- a scan of every key.
CREATE INDEX idempotency_keys_session ON idempotency_keys(session_id);
