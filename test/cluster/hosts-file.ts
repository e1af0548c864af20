import { readFileSync, writeFileSync } from 'node:fs';

/**
 * A name the machine resolves for the duration of a test (the Ingress's public host name), written
 * to /etc/hosts with a marker and taken out again: the api-stub resolves the pool's endpoint with
 * the system resolver, as the service does with public DNS. Lines a crashed earlier run left are
 * removed first. A machine-wide setting: always restored.
 */
const HOSTS = '/etc/hosts';
const MARK = '# voice-cluster-test';

function withoutOurs(text: string): string {
  return text
    .split('\n')
    .filter((line) => !line.endsWith(MARK))
    .join('\n');
}

export function addHostsEntry(name: string, address: string): () => void {
  const before = withoutOurs(readFileSync(HOSTS, 'utf8'));
  writeFileSync(HOSTS, `${before.replace(/\n*$/, '\n')}${address} ${name} ${MARK}\n`);
  return () => writeFileSync(HOSTS, withoutOurs(readFileSync(HOSTS, 'utf8')));
}
