import { Room, RoomEvent } from '@livekit/rtc-node';
import { LiveKitRoomProvider } from '../../worker/rooms/livekit/provider.ts';
import { startLiveKitServer } from './livekit-server.ts';

/**
 * Run by livekit-server.test.ts inside `unshare --net` (a namespace with loopback only): starts the
 * harness's server, which must add its veth pair, and checks two rtc-node participants connect over
 * WebRTC and exchange a data message (ICE and DTLS done). Prints `RESULT <message>`; exit 0 on success.
 */
const server = await startLiveKitServer();
const provider = new LiveKitRoomProvider({ url: server.url, apiKey: server.apiKey, apiSecret: server.apiSecret });
const room = await provider.createRoom({ ttlSeconds: 600 });
const now = Math.floor(Date.now() / 1000);
const token = (role: 'bot' | 'respondent'): string =>
  provider.mintToken({ room, role, sessionId: 'inv_probe', issuedAt: now, expiresAt: now + 600 });
const [a, b] = [new Room(), new Room()];
let got = '';
b.on(RoomEvent.DataReceived, (payload) => (got = new TextDecoder().decode(payload)));
await a.connect(server.url, token('bot'), { autoSubscribe: true, dynacast: false });
await b.connect(server.url, token('respondent'), { autoSubscribe: true, dynacast: false });
await a.localParticipant!.publishData(new TextEncoder().encode('hello'), { reliable: true });
const deadline = Date.now() + 15_000;
while (!got && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
console.log(`RESULT ${got}`);
await Promise.all([a.disconnect(), b.disconnect()]);
await server.stop();
process.exit(got === 'hello' ? 0 : 1);
