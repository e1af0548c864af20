/**
 * The operator's Prometheus metrics, named like controller-runtime's (the runtime's reconcile and
 * workqueue metrics in runtime/metrics.ts; leader election, REST client) so the dashboards that
 * already chart controllers work unchanged.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { createRuntimeMetrics } from './runtime/metrics.ts';

export const CONTROLLER = 'voiceworkerpool';

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const counter = (name: string, help: string, labelNames: string[]) => new Counter({ name, help, labelNames, registers: [registry] });
  const gauge = (name: string, help: string, labelNames: string[]) => new Gauge({ name, help, labelNames, registers: [registry] });
  return {
    registry,
    ...createRuntimeMetrics(registry),
    leaderStatus: gauge('leader_election_master_status', '1 while this replica holds the lease of `name`, else 0', ['name']),
    restRequests: counter('rest_client_requests_total', 'Number of HTTP requests, partitioned by status code, method, and host', [
      'code',
      'method',
      'host',
    ]),
    watchEvents: counter('voice_operator_watch_lifecycle_total', 'Watch lifecycle events by resource', ['resource', 'event']),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
