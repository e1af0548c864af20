import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Self time by function over the V8 CPU profiles (.cpuprofile, from node --cpu-prof) in a folder:
 * the JavaScript side of where a bot's main thread goes. Samples are equally spaced, so a node's
 * self time is its hit count times the profile's mean sample interval.
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
}

export interface FunctionTime {
  name: string;
  ms: number;
  share: number;
}

const label = (frame: ProfileNode['callFrame']): string => {
  const script = frame.url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, '')
    .replace(/^.*?\/(worker|lib)\//, '$1/');
  return `${frame.functionName || '(anonymous)'} (${script || 'native'}${frame.url ? `:${frame.lineNumber + 1}` : ''})`;
};

export function summariseProfiles(dir: string, top: number): FunctionTime[] {
  const totals = new Map<string, number>();
  let all = 0;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile;
    const hits = profile.nodes.reduce((a, n) => a + (n.hitCount ?? 0), 0);
    if (hits === 0) continue;
    const msPerHit = (profile.endTime - profile.startTime) / 1000 / hits;
    for (const node of profile.nodes) {
      if (!node.hitCount || node.callFrame.functionName === '(idle)') continue;
      const key = label(node.callFrame);
      totals.set(key, (totals.get(key) ?? 0) + node.hitCount * msPerHit);
      all += node.hitCount * msPerHit;
    }
  }
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, ms]) => ({ name, ms, share: ms / all }));
}
