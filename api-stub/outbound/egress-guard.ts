import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { forbiddenReason } from './address-policy.ts';
import { OutboundError } from './outbound-error.ts';

/**
 * Decides, at send time, whether a URL may be called and which address the connection must use.
 * Every resolved address must be public unicast (unless the host is allow-listed, which tests use
 * for 127.0.0.1/localhost); the caller then connects to the returned address only, so a second DNS
 * answer (rebinding) cannot move the connection somewhere private.
 */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (host) => {
  const answers = await dnsLookup(host, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

export interface EgressPolicy {
  /** Host names or address literals (lower case, IPv6 without brackets) exempt from the address check. */
  allowHosts: ReadonlySet<string>;
  resolver?: Resolver;
}

/** Parses EGRESS_ALLOW_HOSTS ("127.0.0.1,localhost,[::1]") into the set the policy uses. */
export function parseAllowHosts(raw: string | undefined): ReadonlySet<string> {
  const hosts = (raw ?? '')
    .split(',')
    .map((h) =>
      h
        .trim()
        .toLowerCase()
        .replace(/^\[(.*)\]$/, '$1'),
    )
    .filter(Boolean);
  return new Set(hosts);
}

/** The URL's host as the guard compares it: lower case, IPv6 brackets removed. */
export function hostOf(url: URL): string {
  return url.hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
}

async function withSignal<T>(work: Promise<T>, signal: AbortSignal | undefined, what: string): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) throw OutboundError.fromAbort(signal, what);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(OutboundError.fromAbort(signal, what));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Every address of the host, each vetted; the connection may use only these (happy eyeballs picks among them). */
export async function resolveTarget(url: URL, policy: EgressPolicy, signal?: AbortSignal): Promise<ResolvedAddress[]> {
  const host = hostOf(url);
  const allowed = policy.allowHosts.has(host);
  const literal = isIP(host);
  let candidates: ResolvedAddress[];
  if (literal) {
    candidates = [{ address: host, family: literal === 6 ? 6 : 4 }];
  } else {
    try {
      candidates = await withSignal((policy.resolver ?? systemResolver)(host), signal, `resolving ${host}`);
    } catch (err) {
      if (err instanceof OutboundError) throw err;
      throw new OutboundError('dns', `The host ${host} could not be resolved.`);
    }
    if (candidates.length === 0) throw new OutboundError('dns', `The host ${host} has no address.`);
  }
  if (!allowed) {
    for (const candidate of candidates) {
      const why = forbiddenReason(candidate.address);
      if (why)
        throw new OutboundError(
          'egress_refused',
          `The host ${host} resolves to ${candidate.address}, a ${why} address; the service only calls public addresses.`,
        );
    }
  }
  return candidates;
}
