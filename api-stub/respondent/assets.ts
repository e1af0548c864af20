import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The browser code, bundled on first use with esbuild into memory (nothing is written or committed):
 * the page's controller, its capture worklet, the hosted-room client (loaded only for https rooms)
 * and the browser SDK. Each entry is built separately, so the large hosted-room client never delays
 * the page. A build failure is an error of ours and surfaces as a 500 with the cause logged.
 */
const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');

// A Map, not an object literal: a name such as `constructor` or `__proto__` must not find a prototype member.
const ENTRIES: ReadonlyMap<string, string> = new Map([
  ['main.js', join(here, 'client', 'main.ts')],
  ['capture-worklet.js', join(here, 'client', 'capture-worklet.ts')],
  ['daily-room.js', join(here, 'client', 'daily-room.ts')],
  ['livekit-room.js', join(here, 'client', 'livekit-room.ts')],
  ['browser.js', join(root, 'sdk', 'browser', 'index.ts')],
]);

export interface Asset {
  body: Buffer;
  contentType: string;
}

const cache = new Map<string, Promise<Asset>>();

async function bundle(entry: string): Promise<Asset> {
  // esbuild is loaded lazily: a process that never serves the page never needs it.
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome110', 'firefox115', 'safari16'],
    write: false,
    minify: true,
    sourcemap: false,
    legalComments: 'none',
    logLevel: 'silent',
  });
  const file = result.outputFiles[0];
  if (!file) throw new Error(`esbuild produced no output for ${entry}`);
  return { body: Buffer.from(file.contents), contentType: 'text/javascript; charset=utf-8' };
}

/** The named asset, or null when there is no such asset. */
export function getAsset(name: string): Promise<Asset> | null {
  if (name === 'page.css') {
    return (cache.get(name) ??
      cache
        .set(
          name,
          readFile(join(here, 'page.css')).then((body) => ({ body, contentType: 'text/css; charset=utf-8' })),
        )
        .get(name))!;
  }
  const entry = ENTRIES.get(name);
  if (!entry) return null;
  let pending = cache.get(name);
  if (!pending) {
    pending = bundle(entry);
    // A failed build is retried on the next request rather than cached.
    pending.catch(() => cache.delete(name));
    cache.set(name, pending);
  }
  return pending;
}
