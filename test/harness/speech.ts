import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Spoken answers for the fake microphone, made at test time with Debian's espeak-ng and sox:
 * 16-bit PCM mono WAV at 16 kHz (what Chromium's fake capture reads and what local rooms carry).
 * Silence between answers lets the bot's voice-activity detection see each turn end.
 * Fails loudly when a tool is missing.
 */
export const SPEECH_RATE = 16_000;

function requireTool(name: string): void {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  if (!found.stdout.trim()) throw new Error(`${name} is not installed: run \`bash scripts/bootstrap.sh\` (apt-get install ${name === 'sox' ? 'sox' : 'espeak-ng'})`);
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
  run('espeak-ng', ['-v', options.voice ?? 'en-us', '-s', String(options.wordsPerMinute ?? 175), '-w', raw, text]);
  // silence 1 0.02 1%: trim leading quiet; reverse trick trims the tail the same way.
  run('sox', [raw, '-r', String(SPEECH_RATE), '-c', '1', '-b', '16', '-e', 'signed-integer', file, 'silence', '1', '0.02', '1%', 'reverse', 'silence', '1', '0.02', '1%', 'reverse']);
}

/** Reads a 16-bit PCM WAV's samples (walks the RIFF chunks; no assumption on header size). */
export function readWavPcm(file: string): { sampleRate: number; channels: number; pcm: Buffer } {
  const data = readFileSync(file);
  if (data.toString('ascii', 0, 4) !== 'RIFF' || data.toString('ascii', 8, 12) !== 'WAVE') throw new Error(`${file} is not a WAV file`);
  let offset = 12;
  let sampleRate = 0;
  let channels = 0;
  while (offset + 8 <= data.length) {
    const id = data.toString('ascii', offset, offset + 4);
    const size = data.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      channels = data.readUInt16LE(body + 2);
      sampleRate = data.readUInt32LE(body + 4);
      if (data.readUInt16LE(body + 14) !== 16) throw new Error(`${file} is not 16-bit PCM`);
    } else if (id === 'data') {
      return { sampleRate, channels, pcm: data.subarray(body, Math.min(data.length, body + size)) };
    }
    offset = body + size + (size % 2);
  }
  throw new Error(`${file} has no data chunk`);
}

/** Writes a 16-bit mono WAV header plus samples. */
export function wavBytes(pcm: Buffer, sampleRate = SPEECH_RATE): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + pcm.length, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([header, pcm]);
}

const silence = (ms: number): Buffer => Buffer.alloc(Math.round((SPEECH_RATE * ms) / 1000) * 2);

/** Builds the respondent's track: `leadMs` of silence, then each answer followed by `gapMs` of silence. */
export function spokenTrack(answers: string[], options: { leadMs: number; gapMs: number; dir?: string }): SpokenTrack {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'speech-'));
  const parts: Buffer[] = [silence(options.leadMs)];
  const marks: SpokenTrack['answers'] = [];
  let cursorMs = options.leadMs;
  answers.forEach((text, i) => {
    const file = join(dir, `answer-${i + 1}.wav`);
    speak(text, file);
    const { pcm } = readWavPcm(file);
    const ms = (pcm.length / 2 / SPEECH_RATE) * 1000;
    marks.push({ text, startMs: cursorMs, endMs: cursorMs + ms });
    parts.push(pcm, silence(options.gapMs));
    cursorMs += ms + options.gapMs;
  });
  const pcm = Buffer.concat(parts);
  const file = join(dir, 'microphone.wav');
  writeFileSync(file, wavBytes(pcm));
  return { file, pcm, answers: marks };
}
