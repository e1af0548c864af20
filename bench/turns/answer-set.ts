import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silencePcm } from '../../lib/pcm.ts';
import { readWavPcm, speak, speakWithPiper, SPEECH_RATE } from '../../test/harness/speech.ts';

/**
 * The respondent answers of bench/turns.bench.ts, kept as the script that makes them: the Piper
 * voice (the speech server's, test/harness/speech.ts speakWithPiper), with a few said by espeak-ng
 * for variety (ESPEAK_TEXTS), then sox: 16 kHz mono PCM16. The worker hears them through the real
 * recogniser (the speech server behind the stand-in), never as text. The WAVs are cached under the
 * system temp folder (never in the repo), keyed by text and voice settings. Each item says where
 * its speech starts and ends and where its thinking pauses are, so the bench knows when an answer
 * "really" ended and whether the bot cut in on a pause.
 */
export type ItemKind = 'plain' | 'pause' | 'short' | 'interruption' | 'backchannel';

export interface Span {
  startMs: number;
  endMs: number;
}

export interface AnswerItem {
  id: string;
  kind: ItemKind;
  /** What is said ("" for a noise burst); never shown to the bot as text, only as audio. */
  text: string;
  /** 16 kHz mono PCM16: lead silence, speech (with any pauses), no trailing silence. */
  pcm: Buffer;
  /** First and last speech sample, in ms from the start of `pcm`. */
  speech: Span;
  /** Thinking pauses inside the speech (silence that must not end the turn). */
  pauses: Span[];
  /** In the held-out half: no setting is tuned on it; the bench prints it in rows of its own. */
  heldOut?: boolean;
  /** The question it answers: open ("How did you hear of us?") or closed ("Did you finish the setup?"). */
  question: 'open' | 'closed';
  /** Background noise under the whole item (and the silence after it), if any: its level in dBFS. */
  noiseDbfs?: number;
}

/** Silence at the head of every item, so a clip's first frame is never its onset. */
const LEAD_MS = 100;

const PLAIN = [
  'A friend told me about you at a conference.',
  'Mostly the reporting features, they save me hours every week.',
  'We use it every day with the whole support team.',
  'The setup was quick, but the billing page confused me.',
  'I would like a better mobile app.',
  'Our team grew from five to twenty people this year.',
  'I compared three tools and this one was the cheapest.',
  'The integration with our calendar works really well.',
  'I usually log in first thing in the morning.',
  'Support answered my question within an hour.',
];

/** Before the pause, the pause in ms (0.4-1.5 s), after the pause. */
const PAUSED: Array<[string, number, string]> = [
  ['I think,', 800, 'the onboarding, mostly.'],
  ['Well,', 400, 'it was fine overall.'],
  ['The main problem was', 1000, 'the export to spreadsheets.'],
  ['Let me see,', 1200, 'probably about twice a week.'],
  ['We tried', 600, 'two other products before this one.'],
  ['Honestly,', 1500, 'I am not sure yet.'],
  ['It depends on', 700, 'how busy the week is.'],
  ['My manager', 900, 'picked it for the team.'],
  ['I would say', 1100, 'the price is about right.'],
  ['So,', 1300, 'the dashboard could load faster.'],
];

/**
 * The held-out half (issue 21): no setting, threshold or word list was tuned on these; the bench
 * prints them in rows of their own. Pauses after words that sound complete ("We tried", "It
 * works.") and long ones, up to 2 s.
 */
const HELD_OUT_PAUSED: Array<[string, number, string]> = [
  ['We tried', 1200, 'a few tools before this one.'],
  ['My manager', 1400, 'helped us set it up.'],
  ['It works.', 1000, 'Most of the time, anyway.'],
  ['I like it.', 1800, 'The reports especially.'],
  ['We pay monthly.', 2000, 'It is cheaper for us that way.'],
  ['The app is fine,', 1600, 'but the sync is slow.'],
  ['Our designers use it', 1300, 'for sharing mockups.'],
  ['I guess', 2000, 'we could use it more often.'],
  ['Every morning', 900, 'before the team meeting.'],
  ['Not really.', 1500, 'Well, maybe once or twice.'],
];

/**
 * The second half of the pause answers (issue 40): fragments of one to seven words, most of them
 * complete-sounding ("The price.", "It was good."), a few plainly unfinished, then pauses of
 * 0.6-2.5 s. The first ten are tuning items, the last ten held out.
 */
const MORE_PAUSED: Array<[string, number, string]> = [
  ['Yes.', 1400, 'Although the setup took a while.'],
  ['It was good.', 900, 'Better than I expected, really.'],
  ['We use it daily.', 1700, 'Mostly for the weekly reports.'],
  ['Pretty much everything.', 2200, 'Except the calendar sync.'],
  ['I am happy with it.', 600, 'The team is too.'],
  ['The price.', 2500, 'It went up twice this year.'],
  ['Our sales team uses it the most.', 1200, 'Marketing a little.'],
  ['Because of the', 1000, 'reporting features.'],
  ['Not much.', 1900, 'Maybe the search could be faster.'],
  ['We switched last spring.', 800, 'From a spreadsheet, mostly.'],
];
const MORE_HELD_OUT_PAUSED: Array<[string, number, string]> = [
  ['Definitely.', 1700, 'I would recommend it to anyone.'],
  ['It saves time.', 1100, 'A lot of time, actually.'],
  ['The support team.', 2400, 'They always answer quickly.'],
  ['I think so.', 700, 'At least for now.'],
  ['We had some trouble at first.', 1500, 'Then it got easier.'],
  ['Mostly on my phone.', 2000, 'Sometimes on the laptop.'],
  ['Three of us use it every day.', 1300, 'The rest weekly.'],
  ['Well, the thing is', 1800, 'we never finished the setup.'],
  ['About a year.', 600, 'Maybe a bit longer.'],
  ['No complaints.', 2200, 'It does what it says.'],
];

/** Finished short answers (one to five words), each with the kind of question it answers. */
const SHORT = ['Yes.', 'No.', 'Sure.'];
const MORE_SHORT: Array<[string, 'open' | 'closed']> = [
  ['Not really.', 'closed'],
  ['About twice a week.', 'open'],
  ['The reporting.', 'open'],
  ['Every day.', 'open'],
  ['I do.', 'closed'],
  ['Maybe next year.', 'closed'],
  ['It was fine.', 'open'],
];
const HELD_OUT_SHORT: Array<[string, 'open' | 'closed']> = [
  ['Yes, I did.', 'closed'],
  ['Only once.', 'closed'],
  ['Probably the price.', 'open'],
  ['Not yet.', 'closed'],
  ['Three people.', 'open'],
  ['On my laptop.', 'open'],
  ['Absolutely.', 'closed'],
  ['No, never.', 'closed'],
  ['The mobile app.', 'open'],
  ['Last month.', 'open'],
];

/** Finished long answers (eight words or more): two more for tuning, ten held out. */
const MORE_PLAIN = ['We started with the free plan and upgraded after a month.', 'The weekly summary email is the feature I read most.'];
const HELD_OUT_PLAIN = [
  'We mostly use it to share reports with our clients every month.',
  'The onboarding was easy because the guide explained every step clearly.',
  'I would pay more if the exports worked with our accounting tool.',
  'My colleagues in the other office started using it before we did.',
  'The search is fast, but it misses older files sometimes.',
  'We replaced two other tools with it last year.',
  'Honestly the best part is how quickly support answers.',
  'I open it every morning to check what changed overnight.',
  'It crashed once during a demo, which was embarrassing for me.',
  'Our manager asked us to try it after a webinar.',
];

/** Spoken while the bot is still asking (the bench starts them 1.0 s into the bot's audio). */
const INTERRUPTIONS = [
  'Sorry, can I stop you there, I already answered that.',
  'Actually, wait, I have a question first.',
  'Hold on, could you repeat the first part?',
  'Wait, sorry, I did not catch the last part.',
  'Can I ask you something before we go on?',
  'No, no, that is not what I meant at all.',
];

/**
 * A hum ("mm-hm"), given to espeak-ng as phonemes: syllabic nasals, no vowel. Written "Mhm." (until
 * 2026-11-28) both voices spelled it out as letters, "em aitch em" (espeak's phonemes `,Em,eItS'Em`;
 * the recogniser wrote "M. H. M."), so the bench measured three spoken letters, which rightly stop
 * the bot. No text makes either voice hum (Piper renders these phonemes as "M."-like words too).
 */
const HUM = "[[m'm h'm]]";

/** Sounds during the bot's speech that must not stop it: spoken backchannels and noise bursts. */
const BACKCHANNELS: Array<{ text: string } | { noiseMs: number; seed: number }> = [
  { text: HUM },
  { noiseMs: 150, seed: 1 },
  { text: 'Uh-huh.' },
  { noiseMs: 150, seed: 2 },
  { text: 'Yeah.' },
  { text: 'Okay.' },
  { text: 'Right.' },
];

/** Said by espeak-ng instead of the Piper voice: a second, more robotic voice for variety. */
const ESPEAK_TEXTS = new Set([PLAIN[2]!, PLAIN[6]!, PAUSED[3]![0], PAUSED[3]![2], INTERRUPTIONS[1]!, HUM]);

/**
 * Three voices: Piper (the speech server's), espeak-ng's American voice and its British one (a
 * slower, lower voice). The older items keep their voices (ESPEAK_TEXTS); the items added for issue
 * 40 take them in turn (two Piper, one of each espeak-ng voice), and every fifth of them is said
 * over steady background noise (NOISE_DBFS).
 */
export type Voice = 'piper' | 'espeak' | 'espeak-gb';
const TURN_OF_VOICES: readonly Voice[] = ['piper', 'piper', 'espeak', 'espeak-gb'];
const voiceInTurn = (i: number): Voice => TURN_OF_VOICES[i % TURN_OF_VOICES.length]!;
const noisyInTurn = (i: number): boolean => i % 5 === 4;
/** The level of the background noise under the noisy items: a quiet room with a fan. */
const NOISE_DBFS = -42;

const ESPEAK_SETTINGS: Record<Exclude<Voice, 'piper'>, { voice: string; wordsPerMinute: number }> = {
  espeak: { voice: 'en-us', wordsPerMinute: 175 },
  'espeak-gb': { voice: 'en-gb', wordsPerMinute: 160 },
};

const cacheFile = (text: string, voice: Voice, cacheDir: string): string => {
  const settings = voice === 'piper' ? 'piper-joe-medium|noise0' : voice === 'espeak' ? 'en-us|175' : 'en-gb|160';
  return join(cacheDir, `${createHash('sha256').update(`${settings}|${SPEECH_RATE}|sox-D|${text}`).digest('hex').slice(0, 16)}.wav`);
};

/**
 * Speaks every text not yet cached (the Piper ones in one child process: the voice loads once),
 * cached by content; the cache survives between runs. Returns each text's PCM.
 */
export function spokenPcms(texts: Array<{ text: string; voice: Voice }>, cacheDir: string): Map<string, Buffer> {
  // Written beside, then renamed: a run killed mid-write leaves no half file under the key.
  const partial = (file: string) => file.replace(/\.wav$/, `.${process.pid}.partial.wav`);
  const missing = texts.filter(
    (t, i) => !existsSync(cacheFile(t.text, t.voice, cacheDir)) && texts.findIndex((u) => u.text === t.text && u.voice === t.voice) === i,
  );
  const piper = missing
    .filter((t) => t.voice === 'piper')
    .map((t) => ({ text: t.text, file: partial(cacheFile(t.text, 'piper', cacheDir)) }));
  speakWithPiper(piper);
  for (const t of missing) if (t.voice !== 'piper') speak(t.text, partial(cacheFile(t.text, t.voice, cacheDir)), ESPEAK_SETTINGS[t.voice]);
  for (const t of missing) renameSync(partial(cacheFile(t.text, t.voice, cacheDir)), cacheFile(t.text, t.voice, cacheDir));
  return new Map(texts.map((t) => [`${t.voice}|${t.text}`, readWavPcm(cacheFile(t.text, t.voice, cacheDir)).pcm]));
}

/** A burst of white noise (a cough, a knock) at about -12 dBFS, from a fixed seed. */
export function noisePcm(ms: number, seed: number, peak = 8000): Buffer {
  const samples = Math.round((SPEECH_RATE * ms) / 1000);
  const out = Buffer.alloc(samples * 2);
  let state = seed * 2654435761;
  for (let i = 0; i < samples; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0; // LCG: the same burst every run
    out.writeInt16LE(Math.round(((state / 2 ** 32) * 2 - 1) * peak), i * 2);
  }
  return out;
}

/** Uniform noise of this RMS level in dBFS: its peak is sqrt(3) times its RMS. */
const peakOf = (dbfs: number): number => Math.round(32768 * 10 ** (dbfs / 20) * Math.sqrt(3));

/** `pcm` with steady noise of `dbfs` added (fixed seed), clipped to 16 bits. */
export function withNoise(pcm: Buffer, dbfs: number, seed = 7): Buffer {
  const noise = noisePcm((pcm.length / 2 / SPEECH_RATE) * 1000 + 1, seed, peakOf(dbfs));
  const out = Buffer.alloc(pcm.length);
  for (let i = 0; i + 1 < pcm.length; i += 2) {
    out.writeInt16LE(Math.max(-32768, Math.min(32767, pcm.readInt16LE(i) + noise.readInt16LE(i))), i);
  }
  return out;
}

/** `ms` of what follows the item: silence, or its background noise. */
export function silenceAfter(item: AnswerItem, ms: number): Buffer {
  const quiet = silencePcm(ms, SPEECH_RATE);
  return item.noiseDbfs === undefined ? quiet : withNoise(quiet, item.noiseDbfs, 11);
}

const durationMs = (pcm: Buffer): number => (pcm.length / 2 / SPEECH_RATE) * 1000;

interface ItemOptions {
  question?: 'open' | 'closed';
  heldOut?: boolean;
  noiseDbfs?: number;
}

function item(id: string, kind: ItemKind, text: string, parts: Array<Buffer | number>, options: ItemOptions = {}): AnswerItem {
  const pcm: Buffer[] = [silencePcm(LEAD_MS, SPEECH_RATE)];
  const pauses: Span[] = [];
  let cursor = LEAD_MS;
  for (const part of parts) {
    if (typeof part === 'number') {
      pauses.push({ startMs: cursor, endMs: cursor + part });
      pcm.push(silencePcm(part, SPEECH_RATE));
      cursor += part;
    } else {
      pcm.push(part);
      cursor += durationMs(part);
    }
  }
  const whole = Buffer.concat(pcm);
  return {
    id,
    kind,
    text,
    pcm: options.noiseDbfs === undefined ? whole : withNoise(whole, options.noiseDbfs),
    speech: { startMs: LEAD_MS, endMs: cursor },
    pauses,
    question: options.question ?? 'open',
    ...(options.heldOut ? { heldOut: true } : {}),
    ...(options.noiseDbfs !== undefined ? { noiseDbfs: options.noiseDbfs } : {}),
  };
}

export const DEFAULT_CACHE_DIR = join(tmpdir(), 'voice-bench-turns-speech');

/**
 * The whole set, in a fixed order per kind. Throws (naming the fix) when espeak-ng or sox is
 * missing, or the Piper voice is not fetched (scripts/speech-models.sh).
 */
export function buildAnswerSet(cacheDir = DEFAULT_CACHE_DIR): Record<ItemKind, AnswerItem[]> {
  mkdirSync(cacheDir, { recursive: true });
  const voices = new Map<string, Voice>();
  const voiced = (text: string, voice: Voice) => {
    if (!voices.has(text)) voices.set(text, voice);
  };
  for (const text of [...PLAIN, ...[...PAUSED, ...HELD_OUT_PAUSED].flatMap(([a, , b]) => [a, b]), ...SHORT, ...INTERRUPTIONS]) {
    voiced(text, ESPEAK_TEXTS.has(text) ? 'espeak' : 'piper');
  }
  for (const b of BACKCHANNELS) if ('text' in b) voiced(b.text, ESPEAK_TEXTS.has(b.text) ? 'espeak' : 'piper');
  const added = [...MORE_PAUSED, ...MORE_HELD_OUT_PAUSED].map(([a, , b], i) => [[a, b], i] as const);
  for (const [[a, b], i] of added) [a, b].forEach((t) => voiced(t, voiceInTurn(i)));
  [...MORE_SHORT, ...HELD_OUT_SHORT].forEach(([t], i) => voiced(t, voiceInTurn(i + 1)));
  [...MORE_PLAIN, ...HELD_OUT_PLAIN].forEach((t, i) => voiced(t, voiceInTurn(i + 2)));
  const spoken = spokenPcms(
    [...voices].map(([text, voice]) => ({ text, voice })),
    cacheDir,
  );
  const say = (text: string): Buffer => spoken.get(`${voices.get(text)!}|${text}`)!;
  const noisy = (i: number): ItemOptions => (noisyInTurn(i) ? { noiseDbfs: NOISE_DBFS } : {});
  const paused = (prefix: string, list: Array<[string, number, string]>, first: number, options: (i: number) => ItemOptions) =>
    list.map(([a, pause, b], i) =>
      item(`${prefix}-${first + i}-${pause}ms`, 'pause', `${a} ... ${b}`, [say(a), pause, say(b)], options(i)),
    );
  return {
    plain: [
      ...PLAIN.map((t, i) => item(`plain-${i + 1}`, 'plain', t, [say(t)])),
      ...MORE_PLAIN.map((t, i) => item(`plain-${PLAIN.length + i + 1}`, 'plain', t, [say(t)], noisy(i + 2))),
      ...HELD_OUT_PLAIN.map((t, i) => item(`held-plain-${i + 1}`, 'plain', t, [say(t)], { ...noisy(i + 4), heldOut: true })),
    ],
    pause: [
      ...paused('pause', PAUSED, 1, () => ({})),
      ...paused('held', HELD_OUT_PAUSED, 1, () => ({ heldOut: true })),
      ...paused('pause', MORE_PAUSED, PAUSED.length + 1, noisy),
      ...paused('held', MORE_HELD_OUT_PAUSED, HELD_OUT_PAUSED.length + 1, (i) => ({ ...noisy(i + 10), heldOut: true })),
    ],
    short: [
      ...SHORT.map((t, i) => item(`short-${i + 1}`, 'short', t, [say(t)], { question: i === 2 ? 'open' : 'closed' })),
      ...MORE_SHORT.map(([t, question], i) => item(`short-${SHORT.length + i + 1}`, 'short', t, [say(t)], { question, ...noisy(i + 1) })),
      ...HELD_OUT_SHORT.map(([t, question], i) =>
        item(`held-short-${i + 1}`, 'short', t, [say(t)], { question, ...noisy(i + 3), heldOut: true }),
      ),
    ],
    interruption: INTERRUPTIONS.map((t, i) => item(`interruption-${i + 1}`, 'interruption', t, [say(t)])),
    backchannel: BACKCHANNELS.map((b, i) =>
      'text' in b
        ? item(`backchannel-${i + 1}`, 'backchannel', b.text, [say(b.text)])
        : item(`noise-${i + 1}-${b.noiseMs}ms`, 'backchannel', '', [noisePcm(b.noiseMs, b.seed)]),
    ),
  };
}
