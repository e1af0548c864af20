import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readWavPcm, speak } from './speech.ts';

/**
 * What the turn-model tests and benches share: the real model files (fetched by
 * scripts/turn-models.sh into its cache, once), espeak-ng speech as 16 kHz samples, and a numpy
 * to run the model vendor's own feature extractor as a reference. Each fails loudly.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

let modelsDir: string | undefined;

/** The cache directory holding both model files (runs scripts/turn-models.sh the first time). */
export function turnModelsDir(): string {
  if (modelsDir) return modelsDir;
  try {
    modelsDir = execFileSync('bash', [join(ROOT, 'scripts/turn-models.sh')], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  } catch (err) {
    throw new Error(`scripts/turn-models.sh failed: ${(err as { stderr?: string }).stderr ?? String(err)}`, { cause: err });
  }
  return modelsDir;
}

/** `text` spoken by espeak-ng (leading and trailing silence trimmed), as 16 kHz mono samples. */
export function spokenSamples(text: string, options: { voice?: string; wordsPerMinute?: number } = {}): Int16Array {
  const dir = mkdtempSync(join(tmpdir(), 'turn-speech-'));
  try {
    const file = join(dir, 'speech.wav');
    speak(text, file, options);
    const { pcm } = readWavPcm(file);
    return new Int16Array(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.length));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `samples` followed by `ms` of digital silence (what the turn model hears after that long a pause). */
export function withSilence(samples: Int16Array, ms: number): Int16Array {
  const out = new Int16Array(samples.length + Math.round(ms * 16));
  out.set(samples);
  return out;
}

/** Seeded white noise at `amplitude` (0..1 of full scale), reproducible between runs. */
export function noise(ms: number, amplitude: number, seed = 1): Int16Array {
  let state = seed >>> 0 || 1;
  return Int16Array.from({ length: Math.round(ms * 16) }, () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return Math.round((state / 2 ** 32 - 0.5) * 2 * amplitude * 32767);
  });
}

const NUMPY = 'numpy==2.2.6';

/** A Python with numpy, in a throwaway venv cached beside the models (pip honours its own config, e.g. PIP_CERT). */
export function numpyPython(): string {
  const venv = join(homedir(), '.cache', 'voice-models', NUMPY.replace('==', '-'));
  const script = `set -euo pipefail
mkdir -p "$(dirname "$1")"
exec 9>"$1.lock"; flock 9
if [ ! -f "$1/.complete" ]; then
  rm -rf "$1"
  "$(command -v /usr/bin/python3 || command -v python3)" -m venv "$1"
  "$1/bin/python" -m pip install --quiet --disable-pip-version-check "$2" >&2
  touch "$1/.complete"
fi`;
  try {
    execFileSync('bash', ['-c', script, 'numpy-venv', venv, NUMPY], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    throw new Error(
      `could not make a Python venv with ${NUMPY} in ${venv}: ${(err as { stderr?: Buffer }).stderr?.toString() ?? String(err)}`,
      { cause: err },
    );
  }
  return join(venv, 'bin', 'python');
}
