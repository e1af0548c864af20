import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A throwaway certificate authority for tests and the demo, made with the openssl CLI:
 * serving certificates for 127.0.0.1/localhost and client certificates (e.g. CN=admin, O=system:masters).
 * Everything lives in a fresh temp dir; nothing is reused across runs.
 */
export interface Certificate {
  certPem: string;
  keyPem: string;
  certFile: string;
  keyFile: string;
}

export interface CertificateAuthority extends Certificate {
  dir: string;
  /** A serving certificate; `hosts` are DNS names or IP addresses for the subjectAltName. */
  issueServer(name: string, hosts?: string[]): Certificate;
  /** A client certificate with the given common name and organisations (Kubernetes groups). */
  issueClient(name: string, commonName: string, organisations?: string[]): Certificate;
}

function openssl(args: string[], cwd: string): void {
  try {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString() ?? '';
    throw new Error(`openssl ${args[0]} failed: ${stderr.trim() || String(err)}`, { cause: err });
  }
}

function load(dir: string, name: string): Certificate {
  const certFile = join(dir, `${name}.crt`);
  const keyFile = join(dir, `${name}.key`);
  return { certFile, keyFile, certPem: readFileSync(certFile, 'utf8'), keyPem: readFileSync(keyFile, 'utf8') };
}

export function createCertificateAuthority(commonName = 'voice-test-ca'): CertificateAuthority {
  const dir = mkdtempSync(join(tmpdir(), 'voice-pki-'));
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '2',
      '-subj',
      `/CN=${commonName}`,
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
  const ca = load(dir, 'ca');

  const issue = (name: string, subject: string, extensions: string[]): Certificate => {
    writeFileSync(join(dir, `${name}.ext`), extensions.join('\n') + '\n');
    openssl(
      [
        'req',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-subj',
        subject,
        '-keyout',
        `${name}.key`,
        '-out',
        `${name}.csr`,
      ],
      dir,
    );
    openssl(
      [
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.crt',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-days',
        '2',
        '-extfile',
        `${name}.ext`,
        '-out',
        `${name}.crt`,
      ],
      dir,
    );
    return load(dir, name);
  };

  return {
    ...ca,
    dir,
    issueServer(name, hosts = ['127.0.0.1', 'localhost']) {
      const san = hosts.map((h) => (/^[\d.]+$|:/.test(h) ? `IP:${h}` : `DNS:${h}`)).join(',');
      return issue(name, `/CN=${hosts[0] ?? name}`, [
        'basicConstraints=CA:FALSE',
        'keyUsage=digitalSignature,keyEncipherment',
        'extendedKeyUsage=serverAuth',
        `subjectAltName=${san}`,
      ]);
    },
    issueClient(name, commonName, organisations = []) {
      const subject = `${organisations.map((o) => `/O=${o}`).join('')}/CN=${commonName}`;
      return issue(name, subject, [
        'basicConstraints=CA:FALSE',
        'keyUsage=digitalSignature,keyEncipherment',
        'extendedKeyUsage=clientAuth',
      ]);
    },
  };
}
