import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OpenAIRealtimeSpeechToText } from '../../worker/providers/realtime-stt.ts';
import { TURN_POLICY_DEFAULTS } from '../../worker/bot/policy/turn-policy.ts';
import { DEFAULT_CACHE_DIR, silenceAfter, type AnswerItem } from './answer-set.ts';
import { replayItem, type PauseWords, type ReplayOptions, type ReplayRoute, type ReplaySignals } from './replay.ts';

/**
 * The words of every pause of an answer, as the bot gets them: the item is streamed in real time
 * to the self-hosted speech server's realtime API through the worker's own client, and committed at
 * each pause the detector announces (its commit point, fixed for the whole sweep); what comes back
 * and how long after the commit it came are kept. The hosted route replays the same words at the
 * realistic profile's fixed delay. Measured once per item and cached (a file beside the answer
 * set's audio, keyed by the audio and the commit times; BENCH_TURNS_REMEASURE=1 measures again):
 * the self-hosted delays are this machine's, under its load at the time, and the bench says so.
 */
export interface ItemWords {
  commits: PauseWords[];
}

const CHUNK_MS = 20;

/** The audio times of the item's pause events at this commit point (no model: silence alone, never ending early). */
async function commitTimes(item: AnswerItem, signals: ReplaySignals, options: ReplayOptions): Promise<number[]> {
  const times: number[] = [];
  const recording: ReplayRoute = {
    name: 'commit points',
    words: (_item, at) => {
      times.push(at);
      return null;
    },
  };
  await replayItem(item, signals, recording, {
    ...options,
    useModel: false,
    settings: { ...options.settings, silenceMs: 4000, holdMs: 0 },
  });
  return times;
}

const sleepUntil = (at: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, at - performance.now())));

/** Streams the item in real time and commits at `times`; each commit's words and delay. */
async function measure(item: AnswerItem, times: number[], server: { url: string; token: string }): Promise<PauseWords[]> {
  const stt = new OpenAIRealtimeSpeechToText({
    baseURL: server.url,
    apiKey: server.token,
    model: TURN_POLICY_DEFAULTS.engines.sttRealtimeModel,
    provider: 'speech-server',
    policy: { timeoutMs: 30_000, retries: 0 },
  });
  const stream = await stt.openStream({ sampleRate: 16_000, language: 'en' });
  const chunkBytes = (16_000 * CHUNK_MS * 2) / 1000;
  // The item, then the silence after it, up to the last commit (the bot's audio goes on after the answer).
  const audio = Buffer.concat([item.pcm, silenceAfter(item, Math.max(0, ...times) + 1000 - item.pcm.length / 32)]);
  const start = performance.now();
  const texts: Array<Promise<{ text: string; delayMs: number }>> = [];
  let next = 0;
  try {
    for (let offset = 0; offset < audio.length && next < times.length; offset += chunkBytes) {
      const audioMs = ((offset + chunkBytes) / 2 / 16_000) * 1000;
      await sleepUntil(start + audioMs);
      stream.append(audio.subarray(offset, offset + chunkBytes));
      while (next < times.length && audioMs >= times[next]!) {
        const committedAt = performance.now();
        texts.push(stream.commit().then((text) => ({ text, delayMs: Math.round(performance.now() - committedAt) })));
        next++;
      }
    }
    const done = await Promise.all(texts);
    const joined: string[] = [];
    return done.map((d, i) => {
      joined.push(d.text.trim());
      return { commitAtMs: times[i]!, text: joined.filter(Boolean).join(' '), delayMs: d.delayMs };
    });
  } finally {
    stream.close();
  }
}

export async function measureWords(
  items: AnswerItem[],
  signals: ReplaySignals,
  options: ReplayOptions,
  server: { url: string; token: string },
  log: (line: string) => void,
): Promise<Map<string, ItemWords>> {
  const dir = join(DEFAULT_CACHE_DIR, 'words');
  mkdirSync(dir, { recursive: true });
  const out = new Map<string, ItemWords>();
  let measured = 0;
  for (const item of items) {
    const times = await commitTimes(item, signals, options);
    const key = createHash('sha256')
      .update(`words-v2|${JSON.stringify(times)}`)
      .update(item.pcm)
      .digest('hex')
      .slice(0, 16);
    const file = join(dir, `${key}.json`);
    if (existsSync(file) && process.env.BENCH_TURNS_REMEASURE !== '1') {
      out.set(item.id, JSON.parse(readFileSync(file, 'utf8')) as ItemWords);
      continue;
    }
    const words = { commits: await measure(item, times, server) };
    writeFileSync(file, JSON.stringify(words));
    out.set(item.id, words);
    measured++;
  }
  log(`words: ${measured} items streamed to the speech server now, ${items.length - measured} from the cache (${dir})`);
  return out;
}

/** A route that replays measured words: their own delays (self-hosted), or a fixed one (hosted). */
export function wordsRoute(name: string, words: Map<string, ItemWords>, fixedDelayMs?: number): ReplayRoute {
  return {
    name,
    words(item, commitAtMs) {
      const commits = words.get(item.id)?.commits ?? [];
      const found = commits.find((c) => Math.abs(c.commitAtMs - commitAtMs) < 1);
      if (!found) return null;
      return fixedDelayMs === undefined ? found : { ...found, delayMs: fixedDelayMs };
    },
  };
}
