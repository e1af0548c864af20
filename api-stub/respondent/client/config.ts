/**
 * The page's configuration. The api-stub renders the session's public facts into a JSON script
 * element (api-stub/routes/respondent.ts). The publishable key comes from the URL fragment, where
 * the browser SDK puts it (`#pk=pk_test_…`): the api-stub keeps only key hashes, and a fragment is
 * never sent to any server, nor in a Referer. See docs/respondent-page.md.
 */
export interface PageConfig {
  sessionId: string;
  interviewId: string;
  /** The publishable key the session was created with, or null when the page was opened without the SDK. */
  publishableKey: string | null;
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
  const pk = new URLSearchParams(location.hash.slice(1)).get('pk');
  return {
    sessionId: parsed.sessionId as string,
    interviewId: parsed.interviewId as string,
    status: parsed.status as string,
    title: typeof parsed.title === 'string' ? parsed.title : 'Voice interview',
    publishableKey: pk && /^pk_(test|live)_[A-Za-z0-9]+$/.test(pk) ? pk : null,
    apiBase: location.origin,
  };
}
