import { readFileSync } from 'node:fs';
import { getCACertificates } from 'node:tls';

/**
 * CA certificates trusted for TLS to workers and webhook receivers: Node's defaults (its bundled
 * roots plus NODE_EXTRA_CA_CERTS, which Node already folds into them) and, with
 * PIPELINE_EXTRA_CA_FILE, one more PEM bundle (a private CA of a customer's ingress, or tests'
 * throwaway CA). Returns undefined when nothing is added, so Node's default context is used.
 */
export function loadTrustedCas(extraCaFile: string | null): string[] | undefined {
  if (!extraCaFile) return undefined;
  let pem: string;
  try {
    pem = readFileSync(extraCaFile, 'utf8');
  } catch (err) {
    throw new Error(`PIPELINE_EXTRA_CA_FILE: cannot read ${extraCaFile} (${(err as { code?: string }).code ?? String(err)})`, {
      cause: err,
    });
  }
  const certs = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g);
  if (!certs) throw new Error(`PIPELINE_EXTRA_CA_FILE: ${extraCaFile} holds no PEM certificate`);
  return [...getCACertificates('default'), ...certs];
}
