import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { validate, ValidationSeverity, type ValidatorSettings } from 'dockerfile-utils';
import { describe, expect, it } from 'vitest';
import { TURN_MODEL_FILES } from '../../worker/bot/turns/models.ts';

/**
 * Dockerfile.worker, read as data (no Docker engine here): the base, user, port, version label,
 * entry point and health check the issue asks for; and the health check command itself, run
 * against a real HTTP server.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const text = readFileSync(resolve(ROOT, 'Dockerfile.worker'), 'utf8');
const instructions = text
  .replace(/\\\n/g, ' ')
  .split('\n')
  .filter((l) => l.trim() && !l.trim().startsWith('#'));
const of = (name: string) => instructions.filter((l) => l.startsWith(`${name} `));

describe('Dockerfile.worker', () => {
  it('runs Node 24 slim as a non-root user on port 7860, labelled v1.3.0', () => {
    expect(of('FROM').every((l) => /^FROM node:24(-bookworm)?-slim\b/.test(l))).toBe(true);
    expect(of('USER').at(-1)).toBe('USER 1000:1000');
    expect(of('EXPOSE')).toEqual(['EXPOSE 7860 9090']);
    expect(of('LABEL').join(' ')).toMatch(/org\.opencontainers\.image\.version="v1\.3\.0"/);
    expect(of('ENTRYPOINT')).toEqual(['ENTRYPOINT ["node", "worker/main.ts"]']);
    expect(of('STOPSIGNAL')).toEqual(['STOPSIGNAL SIGTERM']);
  });

  it('builds from a context that leaves out node_modules and the caches test tools write into worker/', () => {
    const ignored = readFileSync(resolve(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim());
    for (const entry of ['node_modules', '.git', '**/__pycache__', '**/.mypy_cache', '**/.ruff_cache'])
      expect(ignored, entry).toContain(entry);
  });

  it('copies only paths that exist', () => {
    for (const line of of('COPY').filter((l) => !l.includes('--from'))) {
      for (const source of line.split(/\s+/).slice(1, -1)) expect(existsSync(resolve(ROOT, source)), source).toBe(true);
    }
  });

  it('installs Debian python3 and the pinned, hashed daily-python wheel the tests use, for the Daily bridge', () => {
    const requirements = readFileSync(resolve(ROOT, 'worker/rooms/daily/requirements.txt'), 'utf8');
    expect(requirements).toMatch(/^daily-python==\d+\.\d+\.\d+ \\\n\s+--hash=sha256:[0-9a-f]{64}$/m);
    // The same file scripts/python-env.sh installs for the tests, with --require-hashes there too.
    expect(readFileSync(resolve(ROOT, 'scripts/python-env.sh'), 'utf8')).toMatch(
      /--require-hashes -r worker\/rooms\/daily\/requirements\.txt/,
    );
    const pip = of('RUN').find((l) => l.includes('pip install'))!;
    expect(pip).toMatch(/apt-get install -y --no-install-recommends python3 python3-venv/);
    expect(pip).toMatch(/--require-hashes --only-binary=:all: -r \/tmp\/daily-requirements\.txt/);
    expect(of('COPY')).toContain('COPY worker/rooms/daily/requirements.txt /tmp/daily-requirements.txt');
    expect(pip).toMatch(/python -c "import daily; daily\.Daily\.init\(\)"/); // the build fails if the wheel cannot load
    const venv = /python3 -m venv (\S+)/.exec(pip)![1]!;
    expect(of('COPY')).toContain(`COPY --from=daily-python ${venv} ${venv}`);
    expect(of('ENV').join(' ')).toContain(`DAILY_BRIDGE_PYTHON=${venv}/bin/python`);
    // The final stage has Debian's interpreter that the venv links to, and no Python test files.
    expect(of('RUN').some((l) => /apt-get install -y --no-install-recommends python3\s+&&/.test(l))).toBe(true);
    expect(of('RUN').find((l) => l.startsWith('RUN rm -f'))).toMatch(/worker\/rooms\/daily\/test_\*\.py/);
  });

  it('takes a proxy CA for pip and npm only through build arguments with no default', () => {
    // TARGETARCH is the builder's own (which onnxruntime binary to keep), not a user's setting.
    expect(of('ARG').sort()).toEqual(['ARG PIP_CERT', 'ARG PIP_CERT', 'ARG PIP_CERT', 'ARG TARGETARCH', 'ARG npm_config_cafile']);
    expect(of('RUN').find((l) => l.includes('turn-models.sh'))).toMatch(/^RUN if \[ -z "\$\{PIP_CERT:-\}" \]; then unset PIP_CERT; fi/);
    expect(of('RUN').find((l) => l.includes('pip install'))).toContain('${PIP_CERT:+--cert "$PIP_CERT"}');
    expect(of('RUN').find((l) => l.includes('npm ci'))).toMatch(
      /if \[ -z "\$\{npm_config_cafile:-\}" \]; then unset npm_config_cafile; fi/,
    );
  });

  it('has no findings of the dockerfile-utils linter with every rule an error', () => {
    const strict = Object.fromEntries(
      [
        'deprecatedMaintainer',
        'directiveCasing',
        'emptyContinuationLine',
        'instructionCasing',
        'instructionCmdMultiple',
        'instructionEntrypointMultiple',
        'instructionHealthcheckMultiple',
        'instructionJSONInSingleQuotes',
        'instructionWorkdirRelative',
      ].map((rule) => [rule, ValidationSeverity.ERROR]),
    ) as ValidatorSettings;
    expect(validate(text, strict).map((d) => `${d.range.start.line + 1}: ${d.message}`)).toEqual([]);
  });

  it('carries the turn models, fetched and checked by scripts/turn-models.sh, where TURN_MODELS_DIR points', () => {
    expect(of('COPY')).toContain('COPY scripts/turn-models.sh /tmp/turn-models.sh');
    const fetch = of('RUN').find((l) => l.includes('turn-models.sh'))!;
    expect(fetch).toMatch(/apt-get install -y --no-install-recommends python3 python3-venv/);
    for (const model of Object.values(TURN_MODEL_FILES)) expect(fetch).toContain(`"$cache/${model.file}"`);
    expect(fetch).toContain('"$cache/LICENSE"');
    expect(of('COPY')).toContain('COPY --from=turn-models /opt/voice-models /opt/voice-models');
    expect(of('ENV').join(' ')).toContain('TURN_MODELS_DIR=/opt/voice-models ');
  });

  it("keeps only the Linux builds of onnxruntime-node (only the target CPU's when the builder says)", () => {
    const install = of('RUN').find((l) => l.includes('npm ci'))!;
    expect(install).toContain('rm -rf "$ort/darwin" "$ort/win32"');
    expect(install).toContain('amd64) rm -rf "$ort/linux/arm64"');
    expect(install).toContain('arm64) rm -rf "$ort/linux/x64"');
  });

  it('has a health check command that passes against a live /healthz and fails without one', async () => {
    const check = of('HEALTHCHECK')[0]!;
    const command = JSON.parse(check.slice(check.indexOf('CMD') + 3).trim()) as string[];
    expect(command[0]).toBe('node');
    const server = createServer((req, res) => {
      res.writeHead(req.url === '/healthz' ? 200 : 404);
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;
    // Asynchronous on purpose: the server above lives in this process and must keep answering.
    const run = (p: number) =>
      new Promise<number>((r) =>
        execFile(process.execPath, command.slice(1), { env: { METRICS_PORT: String(p) }, timeout: 10_000 }, (err) =>
          r(err ? Number((err as { code?: number }).code ?? 1) : 0),
        ),
      );
    expect(await run(port)).toBe(0);
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    expect(await run(port)).toBe(1);
  });
});
