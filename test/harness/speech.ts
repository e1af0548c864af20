import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseWav, silencePcm, wavFromPcm16, type DecodedWav } from '../../lib/pcm.ts';

/**
 * Spoken answers for the fake microphone, made at test time with Debian's espeak-ng and sox:
 * 16-bit PCM mono WAV at 16 kHz (what Chromium's fake capture reads and what local rooms carry).
 * Silence between answers lets the bot's voice-activity detection see each turn end.
 * Fails loudly when a tool is missing.
 */
export const SPEECH_RATE = 16_000;

function requireTool(name: string): void {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  if (!found.stdout.trim())
    throw new Error(
      `${name} is not installed: run \`bash scripts/bootstrap.sh\` (apt-get install ${name === 'sox' ? 'sox' : 'espeak-ng'})`,
    );
}

function run(tool: string, args: string[]): void {
  try {
    execFileSync(tool, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(`${tool} ${args.join(' ')} failed: ${stderr || String(err)}`, { cause: err });
  }
}

export interface SpokenTrack {
  /** The WAV file: lead silence, then each answer followed by `gapMs` of silence. */
  file: string;
  /** Its samples (16-bit little-endian, mono, 16 kHz), for clients that stream it themselves. */
  pcm: Buffer;
  /** Where each answer's speech starts and ends, in ms from the start of the file. */
  answers: Array<{ text: string; startMs: number; endMs: number }>;
}

/** One utterance as 16 kHz mono 16-bit WAV, with espeak-ng's leading and trailing silence trimmed. */
export function speak(text: string, file: string, options: { wordsPerMinute?: number; voice?: string } = {}): void {
  requireTool('espeak-ng');
  requireTool('sox');
  const raw = `${file}.espeak.wav`;
  // Every espeak-ng setting spelled out (pitch, amplitude, word gap), so the same text is the same audio.
  run('espeak-ng', [
    '-v',
    options.voice ?? 'en-us',
    '-s',
    String(options.wordsPerMinute ?? 175),
    '-p',
    '50',
    '-a',
    '100',
    '-g',
    '0',
    '-w',
    raw,
    text,
  ]);
  // -D: no dither (sox dithers by default when it requantises, and its dither noise differs per run:
  // a turn model's score moved across a test's bound that way). -R: any other randomness seeded.
  // silence 1 0.02 1%: trim leading quiet; reverse trick trims the tail the same way.
  run('sox', [
    '-D',
    '-R',
    raw,
    '-r',
    String(SPEECH_RATE),
    '-c',
    '1',
    '-b',
    '16',
    '-e',
    'signed-integer',
    file,
    'silence',
    '1',
    '0.02',
    '1%',
    'reverse',
    'silence',
    '1',
    '0.02',
    '1%',
    'reverse',
  ]);
}

/** Reads a 16-bit PCM WAV file's samples. */
export function readWavPcm(file: string): DecodedWav {
  try {
    return parseWav(readFileSync(file));
  } catch (err) {
    throw new Error(`${file}: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * An answer: one utterance, or parts said with a thinking pause between them; `speed` (Piper only,
 * below 1 slower) draws the words out, as a respondent's long "Okaay" over the interviewer.
 */
export type SpokenAnswer = string | { parts: string[]; pauseMs: number; speed?: number };

/**
 * Builds the respondent's track: `leadMs` of silence, then each answer followed by `gapMs` of silence.
 * `voice: 'piper'` speaks with the Piper voice (speakWithPiper) instead of espeak-ng.
 */
export function spokenTrack(
  answers: SpokenAnswer[],
  options: { leadMs: number; gapMs: number; dir?: string; voice?: 'espeak' | 'piper' },
): SpokenTrack {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'speech-'));
  if (options.voice === 'piper') {
    const texts = answers.flatMap((a): Array<{ text: string; speed?: number }> =>
      typeof a === 'string' ? [{ text: a }] : a.parts.map((text) => ({ text, speed: a.speed })),
    );
    speakWithPiper(texts.map(({ text, speed }, i) => ({ text, file: join(dir, `answer-${i + 1}.wav`), ...(speed ? { speed } : {}) })));
  }
  const parts: Buffer[] = [silencePcm(options.leadMs, SPEECH_RATE)];
  const marks: SpokenTrack['answers'] = [];
  let cursorMs = options.leadMs;
  let n = 0;
  for (const answer of answers) {
    const pieces = typeof answer === 'string' ? [answer] : answer.parts;
    const startMs = cursorMs;
    pieces.forEach((text, i) => {
      const file = join(dir, `answer-${++n}.wav`);
      if (options.voice !== 'piper') speak(text, file);
      const { pcm } = readWavPcm(file);
      parts.push(pcm);
      cursorMs += (pcm.length / 2 / SPEECH_RATE) * 1000;
      if (i < pieces.length - 1 && typeof answer !== 'string') {
        parts.push(silencePcm(answer.pauseMs, SPEECH_RATE));
        cursorMs += answer.pauseMs;
      }
    });
    marks.push({ text: pieces.join(' '), startMs, endMs: cursorMs });
    parts.push(silencePcm(options.gapMs, SPEECH_RATE));
    cursorMs += options.gapMs;
  }
  const pcm = Buffer.concat(parts);
  const file = join(dir, 'microphone.wav');
  writeFileSync(file, wavFromPcm16(pcm, SPEECH_RATE));
  return { file, pcm, answers: marks };
}

/**
 * Utterances spoken with the Piper voice en_US-joe-medium (the speech server's voice, from
 * scripts/speech-models.sh), as 16 kHz mono 16-bit WAV files trimmed like speak()'s. One child
 * process speaks them all (test/harness/piper-say.ts: the voice loads once, and its memory stays
 * out of the test worker); the same text gives the same samples on every run (no noise, no dither).
 */
export function speakWithPiper(jobs: Array<{ text: string; file: string; speed?: number }>): void {
  requireTool('sox');
  if (jobs.length === 0) return;
  const request = `${jobs[0]!.file}.piper.json`;
  writeFileSync(
    request,
    JSON.stringify(jobs.map((j) => ({ text: j.text, file: `${j.file}.piper.wav`, ...(j.speed ? { speed: j.speed } : {}) }))),
  );
  run(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'piper-say.ts'), request]);
  for (const job of jobs) {
    run('sox', [
      `${job.file}.piper.wav`,
      '-D',
      '-r',
      String(SPEECH_RATE),
      '-c',
      '1',
      '-b',
      '16',
      '-e',
      'signed-integer',
      job.file,
      'silence',
      '1',
      '0.02',
      '1%',
      'reverse',
      'silence',
      '1',
      '0.02',
      '1%',
      'reverse',
    ]);
  }
}
