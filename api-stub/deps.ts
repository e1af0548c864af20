import type { Database } from './db/database.ts';
import type { Clock } from '../lib/time.ts';
import type { Logger } from '../lib/log.ts';
import type { RoutingDeps } from './routing-deps.ts';

/**
 * What the app needs from the outside world, passed in by main.ts (or a test).
 * Parts that need more (e.g. an encryption key, an outbound fetch) add optional fields here.
 */
export interface AppDeps {
  db: Database;
  clock: Clock;
  log: Logger;
  /** Connect routing, self-host settings and outcome reports (runtime.ts builds it); absent: no key, no outbox wake-up. */
  routing?: RoutingDeps;
}
