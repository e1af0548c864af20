import {
  isHostCommand,
  MESSAGE_SOURCE,
  normaliseOrigin,
  PARENT_ORIGIN_PARAM,
  type HostCommandName,
  type ServiceEvent,
  type ServiceEventName,
} from '../../../sdk/browser/events.ts';

/**
 * The page's side of the postMessage channel to the host page that embeds it.
 * We post only to the origin the SDK named in the URL; a page that frames us under another origin
 * (or a spoofed parentOrigin) receives nothing, because postMessage checks the target origin.
 * Commands are accepted only from the parent window and that same origin.
 */
export interface HostBridge {
  readonly embedded: boolean;
  send(type: ServiceEventName, extra?: Partial<ServiceEvent>): void;
  onCommand(handler: (type: HostCommandName) => void): void;
}

export function createHostBridge(win: Window, sessionId: string): HostBridge {
  const params = new URLSearchParams(win.location.search);
  const claimed = normaliseOrigin(params.get(PARENT_ORIGIN_PARAM));
  // Where the browser tells us who embeds us, the claim must agree with it.
  const ancestors = (win.location as Location & { ancestorOrigins?: DOMStringList }).ancestorOrigins;
  const actual = ancestors && ancestors.length > 0 ? ancestors[0] : null;
  const parentOrigin = claimed && (actual === null || actual === claimed) ? claimed : null;
  const embedded = win.parent !== win && parentOrigin !== null;

  return {
    embedded,
    send(type, extra = {}) {
      if (!embedded || parentOrigin === null) return;
      const event: ServiceEvent = { source: MESSAGE_SOURCE, type, sessionId, at: Math.round(win.performance.now()), ...extra };
      win.parent.postMessage(event, parentOrigin);
    },
    onCommand(handler) {
      win.addEventListener('message', (message) => {
        if (!embedded || message.source !== win.parent || message.origin !== parentOrigin) return;
        if (isHostCommand(message.data)) handler(message.data.type);
      });
    },
  };
}
