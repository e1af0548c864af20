/**
 * The page's configuration. The api-stub renders the session's public facts into a JSON script
 * element (api-stub/routes/respondent.ts). The credentials come from the URL fragment, which is never
 * sent to any server, nor in a Referer: the session's own capability (`#k=…`, part of sessionUrl, so
 * the link works alone: from an email, or in a plain iframe), and the publishable key where the
 * browser SDK adds it (`pk=pk_test_…`). See docs/respondent-page.md.
 */
export interface PageConfig {
  sessionId: string;
  interviewId: string;
  /** The publishable key the session was created with, or null when the page was opened without the SDK. */
  publishableKey: string | null;
  /** The session link's capability (`#k=`), or null for a link without one. */
  sessionToken: string | null;
  /** Where the API lives: the page's own origin. */
  apiBase: string;
  title: string;
  /** The session's status when the page was rendered; a finished session does not offer Start. */
  status: string;
}

export function readConfig(doc: Document, location: Location): PageConfig {
  const element = doc.getElementById('service-config');
  if (!element?.textContent) throw new Error('The page has no session configuration.');
  const parsed = JSON.parse(element.textContent) as Record<string, unknown>;
  for (const key of ['sessionId', 'interviewId', 'status'] as const) {
    if (typeof parsed[key] !== 'string') throw new Error(`The page configuration lacks ${key}.`);
  }
  const fragment = new URLSearchParams(location.hash.slice(1));
  const pk = fragment.get('pk');
  const k = fragment.get('k');
  return {
    sessionId: parsed.sessionId as string,
    interviewId: parsed.interviewId as string,
    status: parsed.status as string,
    title: typeof parsed.title === 'string' ? parsed.title : 'Voice interview',
    publishableKey: pk && /^pk_(test|live)_[A-Za-z0-9]+$/.test(pk) ? pk : null,
    sessionToken: k && /^[A-Za-z0-9_-]{16,256}$/.test(k) ? k : null,
    apiBase: location.origin,
  };
}
