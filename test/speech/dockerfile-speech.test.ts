import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The speech server ships in the worker image as a second command (docs/speech.md): Dockerfile.worker,
 * read as data (no image is built here), carries its code, its models from the same pinned script
 * the tests use, the espeak-ng data Piper needs, and sherpa-onnx-node among the production
 * dependencies it installs.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const text = readFileSync(resolve(ROOT, 'Dockerfile.worker'), 'utf8');
const instructions = text
  .replace(/\\\n/g, ' ')
  .split('\n')
  .filter((l) => l.trim() && !l.trim().startsWith('#'));
const of = (name: string) => instructions.filter((l) => l.startsWith(`${name} `));

describe('Dockerfile.worker carries the speech server', () => {
  it('fetches the speech models with scripts/speech-models.sh and puts them where SPEECH_MODELS_DIR points', () => {
    expect(of('COPY')).toContain('COPY scripts/speech-models.sh scripts/speech-models-prepare.py /tmp/speech/');
    const fetch = of('RUN').find((l) => l.includes('speech-models.sh'))!;
    expect(fetch).toMatch(/^RUN if \[ -z "\$\{PIP_CERT:-\}" \]; then unset PIP_CERT; fi/);
    expect(fetch).toContain('"$cache/moonshine-base-en" "$cache/piper-joe-medium"');
    expect(of('COPY')).toContain('COPY --from=speech-models /opt/speech-models /opt/speech-models');
    expect(of('ENV').join(' ')).toContain('SPEECH_MODELS_DIR=/opt/speech-models');
  });

  it('has the speech code without its tests, espeak-ng-data, and sherpa-onnx-node as a production dependency', () => {
    expect(of('COPY')).toContain('COPY speech/ ./speech/');
    expect(of('RUN').find((l) => l.startsWith('RUN rm -f'))).toContain('speech/*.test.ts');
    expect(of('RUN').some((l) => /apt-get install -y --no-install-recommends espeak-ng-data\s/.test(l))).toBe(true);
    const pkg = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      scripts: Record<string, string>;
    };
    expect(pkg.dependencies['sherpa-onnx-node']).toBe('1.13.8'); // npm ci --omit=dev keeps it
    expect(pkg.scripts.speech).toBe('tsx speech/main.ts');
    // Its platform package has no install script: --ignore-scripts loses nothing.
    const lock = JSON.parse(readFileSync(resolve(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { hasInstallScript?: boolean; optional?: boolean }>;
    };
    for (const name of ['sherpa-onnx-node', 'sherpa-onnx-linux-x64', 'sherpa-onnx-linux-arm64'])
      expect(lock.packages[`node_modules/${name}`]?.hasInstallScript, name).toBeUndefined();
  });
});
