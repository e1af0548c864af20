/**
 * The operator's Prometheus metrics, named like controller-runtime's so existing dashboards work.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export const CONTROLLER = 'voiceworkerpool';

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    reconcileTotal: new Counter({ name: 'controller_runtime_reconcile_total', help: 'Reconciliations by result', labelNames: ['controller', 'result'], registers: [registry] }),
    reconcileErrors: new Counter({ name: 'controller_runtime_reconcile_errors_total', help: 'Reconciliations that returned an error', labelNames: ['controller'], registers: [registry] }),
    reconcileTime: new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Time of one reconciliation',
      labelNames: ['controller'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    queueDepth: new Gauge({ name: 'workqueue_depth', help: 'Keys waiting in the work queue', labelNames: ['name'], registers: [registry] }),
    watchEvents: new Counter({ name: 'voice_operator_watch_lifecycle_total', help: 'Watch lifecycle events by resource', labelNames: ['resource', 'event'], registers: [registry] }),
    leader: new Gauge({ name: 'voice_operator_leader', help: '1 while this replica holds the lease', registers: [registry] }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
