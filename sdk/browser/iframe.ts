import { isServiceEvent, PARENT_ORIGIN_PARAM, type ServiceEvent, type ServiceEventName } from './events.ts';

/**
 * Mounts the respondent page in an iframe and relays its progress events to the host page.
 * Both directions check origins: we accept messages only from the iframe's own window and the
 * sessionUrl's origin, and we post commands only to that origin.
 */
export interface MountOptions {
  /** Called with every event of the page, in order. */
  onEvent?: (event: ServiceEvent) => void;
  /** The iframe's accessible title. */
  title?: string;
}

type Listener = (event: ServiceEvent) => void;

export interface MountedSession {
  readonly iframe: HTMLIFrameElement;
  readonly sessionId: string;
  /** Subscribes to one event name, or '*' for all; returns an unsubscribe function. */
  on(name: ServiceEventName | '*', listener: Listener): () => void;
  /** Resolves with the first event of one of these names (e.g. the end of the interview). */
  next(...names: ServiceEventName[]): Promise<ServiceEvent>;
  /** Asks the page to leave the room (the respondent hung up). */
  hangup(): void;
  /** Removes the iframe and stops listening. */
  destroy(): void;
}

export function mountSession(container: Element, sessionUrl: string, publishableKey: string, options: MountOptions): MountedSession {
  const url = new URL(sessionUrl);
  const pageOrigin = url.origin;
  const sessionId = url.pathname.split('/').filter(Boolean).pop() ?? '';
  url.searchParams.set(PARENT_ORIGIN_PARAM, window.location.origin);
  // The page connects with the link's own capability (`#k=`, kept as it is) or, for older links, the
  // publishable key, added beside it; a fragment never leaves the browser.
  const fragment = new URLSearchParams(url.hash.slice(1));
  fragment.set('pk', publishableKey);
  url.hash = fragment.toString();

  const iframe = document.createElement('iframe');
  iframe.src = url.toString();
  // The page needs the microphone and must play the interviewer's voice without another click.
  iframe.allow = 'microphone; autoplay';
  iframe.title = options.title ?? 'Voice interview';
  iframe.style.border = '0';
  iframe.style.width = '100%';
  iframe.style.height = '100%';
  iframe.style.minHeight = '420px';

  const listeners = new Map<string, Set<Listener>>();
  const emit = (event: ServiceEvent): void => {
    options.onEvent?.(event);
    for (const key of [event.type, '*']) for (const l of listeners.get(key) ?? []) l(event);
  };
  const onMessage = (message: MessageEvent): void => {
    if (message.origin !== pageOrigin || message.source !== iframe.contentWindow) return;
    if (!isServiceEvent(message.data) || message.data.sessionId !== sessionId) return;
    emit(message.data);
  };
  window.addEventListener('message', onMessage);
  container.appendChild(iframe);

  const on = (name: ServiceEventName | '*', listener: Listener): (() => void) => {
    const set = listeners.get(name) ?? new Set<Listener>();
    set.add(listener);
    listeners.set(name, set);
    return () => set.delete(listener);
  };

  return {
    iframe,
    sessionId,
    on,
    next: (...names) =>
      new Promise((resolve) => {
        const off = on('*', (event) => {
          if (names.length === 0 || names.includes(event.type)) {
            off();
            resolve(event);
          }
        });
      }),
    hangup: () => iframe.contentWindow?.postMessage({ source: 'service-host', type: 'service:hangup' }, pageOrigin),
    destroy: () => {
      window.removeEventListener('message', onMessage);
      iframe.remove();
      listeners.clear();
    },
  };
}
