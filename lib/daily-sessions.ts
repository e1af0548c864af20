/**
 * A Daily bot process holds one prewarmed bridge (worker/rooms/daily), and a bridge takes one call:
 * one session per Daily bot process. Said here once, for the worker (worker/config.ts refuses
 * BOT_SESSIONS_PER_PROCESS above it) and the operator (operator/capacity.ts); the CRD's CEL rule
 * cannot import it, so operator/daily-sessions.test.ts checks that the rule agrees.
 */
export const DAILY_SESSIONS_PER_BOT = 1;
