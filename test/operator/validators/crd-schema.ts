/**
 * Turns a CustomResourceDefinition's structural schema (OpenAPI v3 with Kubernetes extensions) into
 * the strict JSON Schema kubeconform validates custom resources with, one file per served version at
 * `<dir>/<group>/<kind>_<version>.json` (kubeconform's `{{ .Group }}/{{ .ResourceKind }}_{{ .ResourceAPIVersion }}`).
 * Strict as the API server's field validation is: an object with declared properties admits no
 * others unless it says it keeps unknown fields.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

type Schema = Record<string, unknown>;

/** One OpenAPI v3 schema node to JSON Schema (recursive). Pure. */
export function toJsonSchema(node: Schema): Schema {
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key.startsWith('x-kubernetes-') || key === 'nullable' || key === 'default') continue;
    if (key === 'properties')
      out.properties = Object.fromEntries(Object.entries(value as Record<string, Schema>).map(([k, v]) => [k, toJsonSchema(v)]));
    else if (key === 'items' || key === 'not') out[key] = toJsonSchema(value as Schema);
    else if (key === 'additionalProperties') out[key] = typeof value === 'boolean' ? value : toJsonSchema(value as Schema);
    else if (key === 'allOf' || key === 'anyOf' || key === 'oneOf') out[key] = (value as Schema[]).map(toJsonSchema);
    else out[key] = value;
  }
  if (node['x-kubernetes-int-or-string'] === true) out.type = ['integer', 'string'];
  if (node.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  // The API server fills defaults in before it validates: a defaulted field is never missing.
  if (Array.isArray(out.required) && out.properties) {
    const props = node.properties as Record<string, Schema>;
    out.required = (out.required as string[]).filter((name) => props[name]?.default === undefined);
    if ((out.required as string[]).length === 0) delete out.required;
  }
  const keepsUnknown = node['x-kubernetes-preserve-unknown-fields'] === true;
  if (out.properties && out.additionalProperties === undefined && !keepsUnknown) out.additionalProperties = false;
  return out;
}

interface Crd {
  spec: { group: string; names: { kind: string }; versions: Array<{ name: string; served: boolean; schema: { openAPIV3Schema: Schema } }> };
}

/** Writes the schema of every served version of the CRD in `crdFile`; returns the files written. */
export function writeCrdSchemas(crdFile: string, dir: string): string[] {
  const crd = parse(readFileSync(crdFile, 'utf8')) as Crd;
  const { group, names } = crd.spec;
  mkdirSync(join(dir, group), { recursive: true });
  return crd.spec.versions
    .filter((v) => v.served)
    .map((version) => {
      const root = toJsonSchema(version.schema.openAPIV3Schema);
      // The API server adds these to every object; a structural schema may leave them out.
      const properties = (root.properties ?? {}) as Record<string, Schema>;
      root.properties = {
        ...properties,
        apiVersion: { type: 'string', enum: [`${group}/${version.name}`] },
        kind: { type: 'string', enum: [names.kind] },
        metadata: { type: 'object' },
      };
      root.required = [...new Set([...((root.required as string[] | undefined) ?? []), 'apiVersion', 'kind', 'metadata'])];
      const file = join(dir, group, `${names.kind.toLowerCase()}_${version.name}.json`);
      writeFileSync(file, JSON.stringify({ $schema: 'http://json-schema.org/draft-07/schema#', ...root }, null, 1));
      return file;
    });
}
