import type { TurnSettings } from '../../config.ts';
import type { TurnModels } from '../interview.ts';
import { resolveTurnModels } from './models.ts';
import { loadSileroVad } from './silero-vad.ts';
import { loadSmartTurn } from './smart-turn.ts';

/** Whether these settings use a model file at all (today's pipeline uses none). */
export function needsTurnModels(turns: Pick<TurnSettings, 'vadEngine' | 'detection'>): boolean {
  return turns.vadEngine === 'silero' || turns.detection === 'model';
}

/** Loads the models the settings ask for, each checked against its pinned checksum. */
export async function loadTurnModels(turns: Pick<TurnSettings, 'vadEngine' | 'detection' | 'modelsDir'>): Promise<TurnModels> {
  if (!needsTurnModels(turns)) return { vad: null, turn: null };
  const paths = resolveTurnModels(turns.modelsDir);
  const [vad, turn] = await Promise.all([
    turns.vadEngine === 'silero' ? loadSileroVad(paths.sileroVad) : null,
    turns.detection === 'model' ? loadSmartTurn(paths.smartTurn) : null,
  ]);
  return { vad, turn };
}
