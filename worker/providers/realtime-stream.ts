import type WebSocket from 'ws';
import type {
  InputAudioBufferAppendEvent,
  InputAudioBufferClearEvent,
  InputAudioBufferCommitEvent,
} from 'openai/resources/realtime/realtime';
import { Pcm16StreamResampler } from '../../lib/pcm-stream.ts';
import type { TranscriptionStream } from '../bot/turns/types.ts';
import { MAX_TRANSCRIPT_CHARS, readRealtimeEvent } from './answers.ts';
import { ProviderError } from './errors.ts';
import { REALTIME_SAMPLE_RATE } from './realtime-connect.ts';

/**
 * One respondent's audio on an open realtime transcription session. Audio is upsampled to the
 * session's 24 kHz with a carry across frames, and sent in batches of `batchMs` (one JSON event
 * per batch, never one per 20 ms frame). A commit is matched to its item by the order of
 * `input_audio_buffer.committed` events (the server commits in the order we ask) and resolved by
 * that item's `...transcription.completed`; it rejects on `...failed`, an `error` event, the
 * socket closing, or `timeoutMs`, so the pipeline never waits forever.
 */
export interface RealtimeStreamOptions {
  socket: WebSocket;
  /** The rate of the PCM we are given (16 kHz in the bot). */
  inputRate: number;
  timeoutMs: number;
  /** Audio per append event. */
  batchMs: number;
}

interface PendingCommit {
  eventId: string;
  itemId: string | null;
  resolve: (text: string) => void;
  reject: (err: ProviderError) => void;
  timer: NodeJS.Timeout;
}

/** The API refuses to commit less than 100 ms of audio; so little sound holds no words anyway. */
export const MIN_COMMIT_MS = 100;
/** Audio queued in the socket beyond this (about 40 s at 24 kHz) means the connection stalled. */
const MAX_BUFFERED_BYTES = 2 * 1024 * 1024;

export class RealtimeTranscriptionStream implements TranscriptionStream {
  private readonly socket: WebSocket;
  private readonly resampler: Pcm16StreamResampler;
  private readonly timeoutMs: number;
  private readonly batchBytes: number;
  private readonly minCommitBytes: number;
  /** The same minimum in session (24 kHz) bytes: what the server counts. */
  private readonly minSessionBytes = Math.round((REALTIME_SAMPLE_RATE * MIN_COMMIT_MS) / 1000) * 2;
  /** Session bytes of the current utterance already sent. */
  private sentBytes = 0;
  private unsent: Buffer[] = [];
  private unsentBytes = 0;
  /** Input bytes of the current utterance, and whether any of it already reached the server. */
  private utteranceBytes = 0;
  private sentInUtterance = false;
  /** The append payloads of the current utterance, to send again if the server's buffer must be reset under it. */
  private sentSinceCommit: string[] = [];
  private readonly pending: PendingCommit[] = [];
  /** Our commits in the order sent whose `committed` event has not come yet (timed-out ones keep their place). */
  private readonly awaitingCommitted: string[] = [];
  private readonly texts = new Map<string, string>();
  private liveItem: string | null = null;
  private commits = 0;
  /** The stream is over (closed by us or the server); every later commit rejects with this. */
  private ended: ProviderError | null = null;
  /** An error event that named no commit: the current utterance is lost, its commit rejects. */
  private utteranceError: ProviderError | null = null;

  constructor(options: RealtimeStreamOptions) {
    this.socket = options.socket;
    this.resampler = new Pcm16StreamResampler(options.inputRate, REALTIME_SAMPLE_RATE);
    this.timeoutMs = options.timeoutMs;
    this.batchBytes = Math.max(2, Math.round((options.inputRate * options.batchMs) / 1000) * 2);
    this.minCommitBytes = Math.round((options.inputRate * MIN_COMMIT_MS) / 1000) * 2;
    this.socket.on('message', (data) => this.onMessage(data));
    this.socket.on('close', (code) =>
      this.end(new ProviderError('stt', 'network', true, `The realtime speech-to-text connection closed (code ${code}).`)),
    );
    this.socket.on('error', () => undefined); // 'close' follows and says what matters
  }

  get interim(): string {
    return this.liveItem ? (this.texts.get(this.liveItem) ?? '') : '';
  }

  append(pcm: Buffer): void {
    if (this.ended || pcm.length === 0) return;
    this.unsent.push(pcm);
    this.unsentBytes += pcm.length;
    this.utteranceBytes += pcm.length;
    if (this.unsentBytes >= this.batchBytes) this.flush();
  }

  commit(): Promise<string> {
    if (this.ended) return Promise.reject(this.ended);
    if (this.utteranceError) {
      const err = this.utteranceError;
      this.dropUtterance();
      return Promise.reject(err);
    }
    if (this.utteranceBytes < this.minCommitBytes) {
      this.dropUtterance();
      return Promise.resolve('');
    }
    this.flush();
    // Resampling holds back the last output sample until the next chunk, so exactly 100 ms in can
    // be a sample short of 100 ms on the wire, which the server refuses: count what it got.
    if (this.sentBytes < this.minSessionBytes) {
      this.dropUtterance();
      return Promise.resolve('');
    }
    const eventId = `commit_${++this.commits}`;
    const commit: InputAudioBufferCommitEvent = { type: 'input_audio_buffer.commit', event_id: eventId };
    this.send(commit);
    this.awaitingCommitted.push(eventId);
    this.utteranceBytes = 0;
    this.sentInUtterance = false;
    this.sentSinceCommit = [];
    this.sentBytes = 0;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.settle(
          entry,
          new ProviderError('stt', 'timeout', true, `The speech-to-text did not answer within ${this.timeoutMs / 1000} s.`),
        );
      }, this.timeoutMs);
      const entry: PendingCommit = { eventId, itemId: null, resolve, reject, timer };
      this.pending.push(entry);
    });
  }

  clear(): void {
    if (!this.ended) this.dropUtterance();
  }

  close(): void {
    this.end(new ProviderError('stt', 'aborted', false, 'The speech-to-text stream was closed.'));
  }

  private dropUtterance(): void {
    if (this.sentInUtterance) {
      const clear: InputAudioBufferClearEvent = { type: 'input_audio_buffer.clear' };
      this.send(clear);
    }
    this.unsent = [];
    this.unsentBytes = 0;
    this.utteranceBytes = 0;
    this.sentInUtterance = false;
    this.sentSinceCommit = [];
    this.sentBytes = 0;
    this.utteranceError = null;
    this.resampler.reset(); // what comes next does not continue the dropped sound
    if (this.liveItem && !this.pending.some((p) => p.itemId === this.liveItem)) this.liveItem = null;
  }

  private flush(): void {
    if (this.unsentBytes === 0) return;
    const pcm24k = this.resampler.push(this.unsent.length === 1 ? this.unsent[0]! : Buffer.concat(this.unsent, this.unsentBytes));
    this.unsent = [];
    this.unsentBytes = 0;
    if (pcm24k.length === 0) return;
    const audio = pcm24k.toString('base64');
    const append: InputAudioBufferAppendEvent = { type: 'input_audio_buffer.append', audio };
    this.send(append);
    this.sentInUtterance = true;
    this.sentSinceCommit.push(audio);
    this.sentBytes += pcm24k.length;
    if (this.socket.bufferedAmount > MAX_BUFFERED_BYTES) {
      this.end(new ProviderError('stt', 'network', true, 'The realtime speech-to-text connection stalled (audio piled up unsent).'));
      this.socket.terminate();
    }
  }

  private send(event: InputAudioBufferAppendEvent | InputAudioBufferCommitEvent | InputAudioBufferClearEvent): void {
    if (this.socket.readyState === this.socket.OPEN) this.socket.send(JSON.stringify(event));
  }

  private onMessage(data: WebSocket.RawData): void {
    // Checked before it is read (answers.ts): a provider's malformed event fails a commit or is
    // ignored, and never throws inside this socket handler, where it would take the bot down.
    const read = readRealtimeEvent(data.toString());
    if (read.kind === 'malformed') return this.onMalformed(read.type, read.itemId, read.problem);
    if (read.kind === 'other') return;
    const event = read.event;
    switch (event.type) {
      case 'input_audio_buffer.committed': {
        const eventId = this.awaitingCommitted.shift();
        const entry = this.pending.find((p) => p.eventId === eventId);
        if (entry) entry.itemId = event.item_id;
        break;
      }
      case 'conversation.item.input_audio_transcription.delta': {
        const sofar = this.texts.get(event.item_id) ?? '';
        // A live caption is a hint; one that grows past any answer's length stops growing.
        if (sofar.length < MAX_TRANSCRIPT_CHARS) this.texts.set(event.item_id, sofar + (event.delta ?? ''));
        this.liveItem = event.item_id;
        break;
      }
      case 'conversation.item.input_audio_transcription.completed': {
        this.texts.delete(event.item_id);
        if (this.liveItem === event.item_id) this.liveItem = null;
        const entry = this.pending.find((p) => p.itemId === event.item_id);
        if (entry) this.settle(entry, event.transcript.trim());
        break;
      }
      case 'conversation.item.input_audio_transcription.failed': {
        const entry = this.pending.find((p) => p.itemId === event.item_id);
        if (entry)
          this.settle(
            entry,
            new ProviderError(
              'stt',
              'bad_response',
              false,
              `The speech-to-text could not transcribe the utterance (${event.error?.code ?? event.error?.type ?? 'failed'}).`,
            ),
          );
        break;
      }
      case 'error':
        this.onError(event.error);
        break;
      default:
        break;
    }
  }

  private onError(detail: { type?: string | null; code?: string | null; event_id?: string | null }): void {
    const err = new ProviderError(
      'stt',
      'bad_response',
      detail.type === 'server_error',
      `The speech-to-text reported an error (${detail.code ?? detail.type ?? 'undescribed'}).`,
    );
    const named = this.pending.find((p) => p.eventId === detail.event_id);
    // An error naming none of our commits: we cannot tell which utterance it spoiled, so all waiting ones fail.
    const spoiled = named ? [named] : [...this.pending];
    const owed = named ? [named.eventId] : [...this.awaitingCommitted];
    for (const id of owed) if (this.awaitingCommitted.includes(id)) this.awaitingCommitted.splice(this.awaitingCommitted.indexOf(id), 1);
    if (spoiled.length === 0) this.utteranceError = err;
    const uncommitted = spoiled.some((p) => p.itemId === null);
    for (const entry of spoiled) this.settle(entry, err);
    if (uncommitted) this.resync();
  }

  /**
   * A malformed event of a type we read. A broken `error` is still an error (of unknown origin);
   * a broken `committed` costs the commit it answered (its item can no longer be matched); a
   * broken `completed` or `failed` fails the commit of its item when the item is readable, else
   * that commit times out. Anything else unreadable is ignored.
   */
  private onMalformed(type: string | null, itemId: string | null, problem: string): void {
    const err = new ProviderError('stt', 'bad_response', false, `The speech-to-text sent a malformed ${type ?? 'event'} (${problem}).`);
    if (type === 'error') return this.onError({ type: null, code: 'malformed_error_event', event_id: null });
    if (type === 'input_audio_buffer.committed') {
      const eventId = this.awaitingCommitted.shift();
      const entry = this.pending.find((p) => p.eventId === eventId);
      if (entry) this.settle(entry, err);
      return;
    }
    if (
      itemId &&
      (type === 'conversation.item.input_audio_transcription.completed' || type === 'conversation.item.input_audio_transcription.failed')
    ) {
      const entry = this.pending.find((p) => p.itemId === itemId);
      if (entry) this.settle(entry, err);
    }
  }

  /**
   * A refused commit leaves its audio in the server's buffer, where it would open the next
   * utterance: clear the buffer and send again what this utterance already sent.
   */
  private resync(): void {
    const clear: InputAudioBufferClearEvent = { type: 'input_audio_buffer.clear' };
    this.send(clear);
    for (const audio of this.sentSinceCommit) {
      const append: InputAudioBufferAppendEvent = { type: 'input_audio_buffer.append', audio };
      this.send(append);
    }
  }

  private settle(entry: PendingCommit, result: string | ProviderError): void {
    const index = this.pending.indexOf(entry);
    if (index < 0) return;
    this.pending.splice(index, 1);
    clearTimeout(entry.timer);
    if (entry.itemId) this.texts.delete(entry.itemId);
    if (typeof result === 'string') entry.resolve(result);
    else entry.reject(result);
  }

  private end(reason: ProviderError): void {
    if (this.ended) return;
    this.ended = reason;
    for (const entry of [...this.pending]) this.settle(entry, reason);
    this.unsent = [];
    this.unsentBytes = 0;
    if (this.socket.readyState === this.socket.OPEN || this.socket.readyState === this.socket.CONNECTING) this.socket.close(1000);
  }
}
