/**
 * Minimal JSON Schemas of the Prometheus Operator's ServiceMonitor, PodMonitor and PrometheusRule
 * (monitoring.coreos.com/v1) for kubeconform. No package on the registries reachable here ships
 * those CRDs as schemas (@kubernetes-models/prometheus-operator carries compiled validators only),
 * so these are written from the operator's API reference: the fields our chart uses, closed where
 * the real CRD is closed, so a misspelt field or a wrong type fails as it would on a cluster.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

type Schema = Record<string, unknown>;

const str: Schema = { type: 'string' };
const stringMap: Schema = { type: 'object', additionalProperties: str };
const duration: Schema = {
  type: 'string',
  pattern: '^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$',
};
const labelSelector: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    matchLabels: stringMap,
    matchExpressions: {
      type: 'array',
      items: {
        type: 'object',
        required: ['key', 'operator'],
        properties: { key: str, operator: str, values: { type: 'array', items: str } },
      },
    },
  },
};
const namespaceSelector: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: { any: { type: 'boolean' }, matchNames: { type: 'array', items: str } },
};
const relabelings: Schema = { type: 'array', items: { type: 'object' } };
const endpoint = (extra: Schema): Schema => ({
  type: 'object',
  additionalProperties: false,
  properties: {
    port: str,
    path: str,
    scheme: { type: 'string', enum: ['http', 'https', 'HTTP', 'HTTPS'] },
    interval: duration,
    scrapeTimeout: duration,
    honorLabels: { type: 'boolean' },
    tlsConfig: { type: 'object' },
    authorization: { type: 'object' },
    bearerTokenSecret: { type: 'object' },
    bearerTokenFile: str,
    relabelings,
    metricRelabelings: relabelings,
    ...extra,
  },
});

function resource(kind: string, spec: Schema): Schema {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    additionalProperties: false,
    required: ['apiVersion', 'kind', 'metadata', 'spec'],
    properties: {
      apiVersion: { type: 'string', enum: ['monitoring.coreos.com/v1'] },
      kind: { type: 'string', enum: [kind] },
      metadata: { type: 'object' },
      spec,
    },
  };
}

export const MONITORING_SCHEMAS: Record<string, Schema> = {
  servicemonitor: resource('ServiceMonitor', {
    type: 'object',
    additionalProperties: false,
    required: ['selector', 'endpoints'],
    properties: {
      selector: labelSelector,
      namespaceSelector,
      jobLabel: str,
      endpoints: { type: 'array', items: endpoint({ targetPort: { type: ['integer', 'string'] } }) },
    },
  }),
  podmonitor: resource('PodMonitor', {
    type: 'object',
    additionalProperties: false,
    required: ['selector'],
    properties: {
      selector: labelSelector,
      namespaceSelector,
      jobLabel: str,
      podMetricsEndpoints: { type: 'array', items: endpoint({ portNumber: { type: 'integer' } }) },
    },
  }),
  prometheusrule: resource('PrometheusRule', {
    type: 'object',
    additionalProperties: false,
    properties: {
      groups: {
        type: 'array',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['name'],
          properties: {
            name: { type: 'string', minLength: 1 },
            interval: duration,
            limit: { type: 'integer' },
            rules: {
              type: 'array',
              items: {
                type: 'object',
                additionalProperties: false,
                required: ['expr'],
                properties: {
                  alert: str,
                  record: str,
                  expr: { type: ['integer', 'string'] },
                  for: duration,
                  keep_firing_for: duration,
                  labels: stringMap,
                  annotations: stringMap,
                },
              },
            },
          },
        },
      },
    },
  }),
};

/** Writes them where kubeconform's `{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}.json` looks. */
export function writeMonitoringSchemas(dir: string): void {
  mkdirSync(join(dir, 'monitoring.coreos.com'), { recursive: true });
  for (const [kind, schema] of Object.entries(MONITORING_SCHEMAS))
    writeFileSync(join(dir, 'monitoring.coreos.com', `${kind}_v1.json`), JSON.stringify(schema, null, 1));
}
