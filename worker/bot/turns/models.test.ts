import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { turnModelsDir } from '../../../test/harness/turn-models.ts';
import { defaultTurnModelsDir, loadTurnModels, resolveTurnModels, TURN_MODEL_FILES, TURN_MODELS_SOURCE } from './models.ts';

const script = readFileSync(new URL('../../../scripts/turn-models.sh', import.meta.url), 'utf8');

describe('turn model files', () => {
  it('pins the same wheel and files as scripts/turn-models.sh', () => {
    expect(script).toContain(`version=${TURN_MODELS_SOURCE.version}\n`);
    expect(script).toContain(`wheel_sha256=${TURN_MODELS_SOURCE.wheelSha256}\n`);
    expect(TURN_MODELS_SOURCE.wheel).toBe(`pipecat_ai-${TURN_MODELS_SOURCE.version}-py3-none-any.whl`);
    for (const model of Object.values(TURN_MODEL_FILES)) {
      expect(script).toContain(`"${model.file} ${model.pathInWheel} ${model.sha256}"`);
    }
  });

  it('scripts/turn-models.sh fills the default cache once, with the licence, and prints it', () => {
    const dir = turnModelsDir();
    expect(dir).toBe(defaultTurnModelsDir());
    expect(readFileSync(join(dir, 'LICENSE'), 'utf8')).toContain('BSD 2-Clause License');
    // Idempotent: a second run finds the verified files and prints the same directory.
    expect(execFileSync('bash', ['scripts/turn-models.sh'], { encoding: 'utf8' }).trim()).toBe(dir);
  });

  it('scripts/turn-models.sh replaces a damaged cache and refuses files that do not match their pins', () => {
    // A separate HOME, so the real cache is untouched; pip's own cache saves a second download.
    const home = mkdtempSync(join(tmpdir(), 'turn-models-home-'));
    const env = { ...process.env, HOME: home, PIP_CACHE_DIR: join(homedir(), '.cache', 'pip') };
    const dir = execFileSync('bash', ['scripts/turn-models.sh'], { encoding: 'utf8', env, stdio: ['ignore', 'pipe', 'pipe'] }).trim();
    expect(dir).toBe(defaultTurnModelsDir(home));
    writeFileSync(join(dir, 'silero_vad.onnx'), 'not a model');
    execFileSync('bash', ['scripts/turn-models.sh'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    expect(resolveTurnModels(dir).sileroVad).toBe(join(dir, 'silero_vad.onnx'));

    const otherHome = mkdtempSync(join(tmpdir(), 'turn-models-home-'));
    mkdirSync(join(otherHome, 'scripts'));
    const wrongPin = 'f'.repeat(64);
    writeFileSync(join(otherHome, 'scripts', 'turn-models.sh'), script.replace(TURN_MODEL_FILES.smartTurn.sha256, wrongPin));
    const run = spawnSync('bash', [join(otherHome, 'scripts', 'turn-models.sh')], { encoding: 'utf8', env: { ...env, HOME: otherHome } });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain(
      `${TURN_MODEL_FILES.smartTurn.pathInWheel} in ${TURN_MODELS_SOURCE.wheel} does not match its pinned sha256 ${wrongPin}`,
    );
    expect(existsSync(join(defaultTurnModelsDir(otherHome), '.complete'))).toBe(false);
    for (const h of [home, otherHome]) rmSync(h, { recursive: true, force: true });
  }, 120_000);

  it('resolves both files in a directory, checked against their sha256', () => {
    const dir = turnModelsDir();
    expect(resolveTurnModels(dir)).toEqual({ sileroVad: join(dir, 'silero_vad.onnx'), smartTurn: join(dir, 'smart-turn-v3.2-cpu.onnx') });
    expect(resolveTurnModels(null)).toEqual(resolveTurnModels(dir));
  });

  it('says how to fix a missing file', () => {
    const empty = mkdtempSync(join(tmpdir(), 'turn-models-'));
    const call = () => resolveTurnModels(empty);
    expect(call).toThrow(`The turn model ${join(empty, 'silero_vad.onnx')} is missing`);
    expect(call).toThrow('bash scripts/turn-models.sh');
    expect(call).toThrow('VAD_ENGINE=energy TURN_DETECTION=silence');
  });

  it('refuses a file that is not the pinned one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'turn-models-'));
    copyFileSync(join(turnModelsDir(), 'silero_vad.onnx'), join(dir, 'silero_vad.onnx'));
    // A truncated download: right name, wrong bytes.
    writeFileSync(join(dir, 'smart-turn-v3.2-cpu.onnx'), readFileSync(join(turnModelsDir(), 'smart-turn-v3.2-cpu.onnx')).subarray(0, 1000));
    expect(() => resolveTurnModels(dir)).toThrow(
      /smart-turn-v3\.2-cpu\.onnx is not the pinned file \(sha256 [0-9a-f]{64}, expected 2bb02631.*bash scripts\/turn-models\.sh/,
    );
  });

  it('loads only the models the settings ask for', async () => {
    const missing = mkdtempSync(join(tmpdir(), 'turn-models-'));
    // Today's pipeline needs no file at all.
    expect(await loadTurnModels({ vad: 'energy', detection: 'silence', modelsDir: missing })).toEqual({ vad: null, turn: null });
    await expect(loadTurnModels({ vad: 'silero', detection: 'silence', modelsDir: missing })).rejects.toThrow(
      'bash scripts/turn-models.sh',
    );
    const vadOnly = await loadTurnModels({ vad: 'silero', detection: 'silence', modelsDir: turnModelsDir() });
    expect(vadOnly.vad?.frameSamples).toBe(512);
    expect(vadOnly.turn).toBeNull();
    const both = await loadTurnModels({ vad: 'silero', detection: 'model', modelsDir: null });
    expect(await both.turn!.completion(new Int16Array(16_000))).toBeGreaterThanOrEqual(0);
    expect(await both.vad!.open().probability(new Int16Array(512))).toBeLessThan(0.5);
  });
});
