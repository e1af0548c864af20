/**
 * Opt-in live test against Daily itself (scripts/test.sh runs it only when DAILY_API_KEY is set;
 * these machines cannot reach Daily, so it has never run here). It uses only the project's code:
 * the REST provider makes a private room, the bot's bridge (real daily-python, DAILY_BRIDGE_PYTHON)
 * joins with the bot token, and a second bridge joins with the respondent token in the page's place.
 * It checks presence, app messages and audio both ways, leaving, then deletes the room. Exit 1 on failure.
 */
import { createLogger } from '../../lib/log.ts';
import { DailyBridge, type BridgeEvent } from '../../worker/rooms/daily/bridge-process.ts';
import { joinDailyRoom } from '../../worker/rooms/daily/bot-room.ts';
import { DailyRoomProvider } from '../../worker/rooms/daily/rest-provider.ts';

const apiKey = process.env.DAILY_API_KEY;
const python = process.env.DAILY_BRIDGE_PYTHON ?? 'python3';
if (!apiKey) throw new Error('DAILY_API_KEY is required for the live Daily test');
const log = createLogger({ name: 'daily-live' });
const provider = new DailyRoomProvider({
  apiKey,
  apiUrl: process.env.DAILY_API_URL ?? 'https://api.daily.co/v1',
  domainId: process.env.DAILY_DOMAIN_ID ?? null,
  log,
});

async function until(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function main(): Promise<void> {
  await provider.init();
  const room = await provider.createRoom({ ttlSeconds: 600 });
  const now = Math.floor(Date.now() / 1000);
  const token = (role: 'bot' | 'respondent') =>
    provider.mintToken({ room, role, sessionId: 'live-test', issuedAt: now, expiresAt: now + 600 });
  const bot = await joinDailyRoom(new DailyBridge({ python }), { url: room.url, token: token('bot') });
  const page = new DailyBridge({ python });
  const pageEvents: BridgeEvent[] = [];
  let pageAudio = 0;
  let botAudio = 0;
  page.on('event', (e: BridgeEvent) => pageEvents.push(e));
  page.on('audio', (pcm: Buffer) => (pageAudio += pcm.length));
  bot.on('audio', (pcm: Buffer) => (botAudio += pcm.length));
  try {
    await page.ready;
    page.send({ op: 'join', url: room.url, token: token('respondent') });
    await until('the respondent to join', () => pageEvents.some((e) => e.event === 'joined'));
    await until('the bot to see the respondent', () => bot.respondentPresent);
    bot.sendControl({ type: 'caption', speaker: 'bot', text: 'live', final: true });
    for (let i = 0; i < 100; i++) bot.sendAudio(Buffer.alloc(960, i % 2 ? 0x20 : 0xe0)); // 2 s at 24 kHz
    await until('the caption at the respondent', () =>
      pageEvents.some((e) => e.event === 'app_message' && (e.message as { text?: string }).text === 'live'),
    );
    await until('the bot audio at the respondent', () => pageAudio > 0);
    for (let i = 0; i < 100; i++) page.sendAudio(Buffer.alloc(960, i % 2 ? 0x20 : 0xe0));
    await until('the respondent audio at the bot', () => botAudio > 0);
    const hung = new Promise((r) => bot.once('hangup', r));
    page.send({ op: 'app_message', message: { type: 'hangup' } });
    await hung;
    const left = new Promise((r) => bot.once('left', r));
    page.leave();
    await left;
    console.log(`daily live test: passed (room ${room.name}; ${pageAudio} bytes bot -> respondent, ${botAudio} bytes respondent -> bot)`);
  } finally {
    bot.close();
    page.kill();
    await provider.deleteRoomNow(room.name).catch(() => undefined);
    provider.close();
  }
}

main().catch((err: unknown) => {
  console.error(`daily live test: FAILED: ${(err as Error).message}`);
  process.exit(1);
});
