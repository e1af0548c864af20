/**
 * The controller runtime's own metrics, named like controller-runtime's (reconcile and workqueue)
 * so the dashboards that already chart controllers work unchanged.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

const durationBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export function createRuntimeMetrics(registry: Registry) {
  const counter = (name: string, help: string, labelNames: string[]) => new Counter({ name, help, labelNames, registers: [registry] });
  const gauge = (name: string, help: string, labelNames: string[]) => new Gauge({ name, help, labelNames, registers: [registry] });
  const histogram = (name: string, help: string, labelNames: string[]) =>
    new Histogram({ name, help, labelNames, buckets: durationBuckets, registers: [registry] });
  return {
    reconcileTotal: counter('controller_runtime_reconcile_total', 'Total number of reconciliations per controller', [
      'controller',
      'result',
    ]),
    reconcileErrors: counter('controller_runtime_reconcile_errors_total', 'Total number of reconciliation errors per controller', [
      'controller',
    ]),
    terminalErrors: counter(
      'controller_runtime_terminal_reconcile_errors_total',
      'Reconciliations that ended in an error no retry fixes (a blocked pool)',
      ['controller'],
    ),
    reconcilePanics: counter('controller_runtime_reconcile_panics_total', 'Total number of reconciliation panics per controller', [
      'controller',
    ]),
    reconcileTimeouts: counter('voice_operator_reconcile_timeouts_total', 'Reconciliations cut off by the per-reconcile timeout', [
      'controller',
    ]),
    reconcileTime: histogram('controller_runtime_reconcile_time_seconds', 'Length of time per reconciliation per controller', [
      'controller',
    ]),
    maxConcurrent: gauge('controller_runtime_max_concurrent_reconciles', 'Maximum number of concurrent reconciles per controller', [
      'controller',
    ]),
    activeWorkers: gauge('controller_runtime_active_workers', 'Number of currently used workers per controller', ['controller']),
    queueDepth: gauge('workqueue_depth', 'Current depth of workqueue', ['name']),
    queueAdds: counter('workqueue_adds_total', 'Total number of adds handled by workqueue', ['name']),
    queueLatency: histogram('workqueue_queue_duration_seconds', 'How long in seconds an item stays in workqueue before being requested', [
      'name',
    ]),
    workDuration: histogram('workqueue_work_duration_seconds', 'How long in seconds processing an item from workqueue takes', ['name']),
    retries: counter('workqueue_retries_total', 'Total number of retries handled by workqueue', ['name']),
    unfinishedWork: gauge('workqueue_unfinished_work_seconds', 'Seconds of work in progress that has not been observed by work_duration', [
      'name',
    ]),
    longestRunning: gauge(
      'workqueue_longest_running_processor_seconds',
      'Seconds the longest running processor of workqueue has been running',
      ['name'],
    ),
  };
}

export type RuntimeMetrics = ReturnType<typeof createRuntimeMetrics>;
