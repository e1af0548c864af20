import type { Caption } from './room.ts';

/**
 * Everything the page shows: one state with its words, the captions, and which buttons are there.
 * The state is also written to <main data-state> so that styles (and tests) can follow it.
 */
export type PageState =
  'ready' | 'microphone' | 'connecting' | 'speaking' | 'listening' | 'thinking' | 'finished' | 'failed' | 'error' | 'closed';

const WORDS: Record<PageState, { title: string; detail: string }> = {
  ready: { title: 'Ready when you are', detail: 'Press Start. Your browser will ask to use your microphone.' },
  microphone: { title: 'Allow your microphone', detail: 'Your browser is asking for permission to use your microphone.' },
  connecting: { title: 'Connecting…', detail: 'Getting your interviewer ready.' },
  speaking: { title: 'Interviewer speaking', detail: 'Listen to the question. You can answer when it finishes.' },
  listening: { title: 'Your turn', detail: 'Speak your answer. Pause when you are done.' },
  thinking: { title: 'One moment…', detail: 'The interviewer is preparing the next question.' },
  finished: { title: 'Thank you!', detail: 'The interview is complete. You can close this page.' },
  failed: { title: 'The interview stopped', detail: 'Something went wrong on our side. Press Try again to start over.' },
  error: { title: 'Something went wrong', detail: '' },
  closed: { title: 'This interview is not available', detail: '' },
};

export interface View {
  set(state: PageState, detail?: string): void;
  caption(caption: Caption): void;
  showRetry(show: boolean): void;
  onStart(handler: () => void): void;
  onRetry(handler: () => void): void;
  onLeave(handler: () => void): void;
}

export function createView(doc: Document): View {
  const byId = <T extends HTMLElement>(id: string): T => {
    const element = doc.getElementById(id);
    if (!element) throw new Error(`The page lacks #${id}.`);
    return element as T;
  };
  const main = byId('interview');
  const title = byId('state-title');
  const detail = byId('state-detail');
  const log = byId<HTMLOListElement>('captions');
  const partial = byId('caption-partial');
  const start = byId<HTMLButtonElement>('start');
  const retry = byId<HTMLButtonElement>('retry');
  const leave = byId<HTMLButtonElement>('leave');
  const partialBySpeaker = new Map<string, string>();

  const renderPartial = (): void => {
    partial.textContent = [...partialBySpeaker.entries()]
      .map(([speaker, text]) => `${speaker === 'bot' ? 'Interviewer' : 'You'}: ${text}`)
      .join('  ');
  };

  return {
    set(state, extra) {
      main.dataset.state = state;
      const words = WORDS[state];
      title.textContent = words.title;
      detail.textContent = extra ?? words.detail;
      start.hidden = state !== 'ready';
      const live = state === 'speaking' || state === 'listening' || state === 'thinking' || state === 'connecting';
      leave.hidden = !live;
      if (state !== 'error') retry.hidden = true;
      // Move focus to what the respondent can do next, or to the news, when the interview ends.
      if (state === 'finished' || state === 'failed' || state === 'closed') title.focus();
    },
    caption(c) {
      if (!c.final) {
        partialBySpeaker.set(c.speaker, c.text);
        renderPartial();
        return;
      }
      partialBySpeaker.delete(c.speaker);
      renderPartial();
      const item = doc.createElement('li');
      item.className = `caption caption-${c.speaker}`;
      const who = doc.createElement('span');
      who.className = 'speaker';
      who.textContent = c.speaker === 'bot' ? 'Interviewer' : 'You';
      const text = doc.createElement('span');
      text.className = 'text';
      text.textContent = c.text;
      item.append(who, text);
      log.append(item);
      item.scrollIntoView({ block: 'nearest' });
    },
    showRetry(show) {
      retry.hidden = !show;
      if (show) retry.focus();
    },
    onStart: (handler) => start.addEventListener('click', handler),
    onRetry: (handler) => retry.addEventListener('click', handler),
    onLeave: (handler) => leave.addEventListener('click', handler),
  };
}
