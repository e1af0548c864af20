import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { installScriptedMicrophone } from './scripted-microphone.ts';

/**
 * Debian's Chromium through playwright-core, headless, with a fresh profile, a fake microphone
 * and camera, and the permission prompt answered yes. With `fakeAudioFile` the microphone plays
 * that WAV (16-bit PCM; Chromium loops it); with `scriptedMicrophone` the test speaks into it when
 * it chooses (scripted-microphone.ts). Fails loudly when Chromium is missing.
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface Chromium {
  context: BrowserContext;
  close(): Promise<void>;
}

export interface ChromiumOptions {
  /** A 16-bit PCM WAV the fake microphone plays, in a loop. */
  fakeAudioFile?: string;
  /**
   * base64 SHA-256 hashes of public keys whose certificates Chromium accepts although no CA it
   * knows signed them: the workers' throwaway certificates (wss rooms), and nothing else.
   */
  trustSpki?: string[];
  /** Answer the microphone prompt "no" instead of "yes" (the respondent blocks the microphone). */
  denyMicrophone?: boolean;
  /** The microphone is silent until the test speaks into it (scripted-microphone.ts); no file plays. */
  scriptedMicrophone?: boolean;
}

export async function launchChromium(options: ChromiumOptions = {}): Promise<Chromium> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`Chromium is not installed at ${CHROMIUM_PATH}: run \`bash scripts/bootstrap.sh\` (apt-get install chromium)`);
  }
  if (options.fakeAudioFile && !existsSync(options.fakeAudioFile))
    throw new Error(`fake microphone file ${options.fakeAudioFile} does not exist`);
  const profile = mkdtempSync(join(tmpdir(), 'chromium-profile-'));
  const args = [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--use-fake-device-for-media-stream',
    options.denyMicrophone ? '--deny-permission-prompts' : '--use-fake-ui-for-media-stream',
  ];
  if (options.fakeAudioFile) args.push(`--use-file-for-fake-audio-capture=${options.fakeAudioFile}`);
  if (options.trustSpki?.length) args.push(`--ignore-certificate-errors-spki-list=${options.trustSpki.join(',')}`);
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args,
    viewport: { width: 1000, height: 760 },
    timeout: 30_000,
  });
  if (options.scriptedMicrophone) await context.addInitScript(installScriptedMicrophone);
  return {
    context,
    close: async () => {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
