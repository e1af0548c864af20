import { z } from 'zod';

/**
 * A text frame of a local room, from the respondent or the bot: a JSON object with a string
 * `type`. Anything else (not JSON, `null`, a number, an array, no `type`) is `null`, so a room's
 * message handler never reads a property of something that is not an object.
 */
export const ControlFrame = z.looseObject({ type: z.string().min(1).max(64) });
export type ControlFrame = z.infer<typeof ControlFrame>;

export function parseControlFrame(text: string): ControlFrame | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const parsed = ControlFrame.safeParse(value);
  return parsed.success ? parsed.data : null;
}
