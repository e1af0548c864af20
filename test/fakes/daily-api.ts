import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for the hosted video-room provider's REST API (Daily), on its real paths:
 * GET /v1/ (domain configuration with domain_id), POST/GET /v1/rooms, GET/DELETE
 * /v1/rooms/:name, POST /v1/meeting-tokens. Authorization is `Bearer <API key>`; errors are
 * `{ error, info }` with the provider's codes (authentication-error, not-found,
 * invalid-request-error). `verifyToken` checks a self-signed meeting token the way the provider
 * does: HS256 with the domain's API key, `r` and `d` claims, not expired.
 */
export interface FakeRoom {
  id: string;
  name: string;
  api_created: boolean;
  privacy: string;
  url: string;
  created_at: string;
  config: Record<string, unknown>;
}

export interface FakeDaily {
  url: string;
  apiKey: string;
  domainId: string;
  rooms: Map<string, FakeRoom>;
  calls: Array<{ method: string; path: string }>;
  failNext(status: number, count?: number): void;
  verifyToken(token: string): Record<string, unknown>;
  close(): Promise<void>;
}

export async function startFakeDaily(options: { apiKey?: string; domainName?: string } = {}): Promise<FakeDaily> {
  const apiKey = options.apiKey ?? `fake-daily-key-${randomBytes(8).toString('hex')}`;
  const domainName = options.domainName ?? 'voice-test';
  const domainId = randomUUID();
  const rooms = new Map<string, FakeRoom>();
  const calls: Array<{ method: string; path: string }> = [];
  let failures: number[] = [];

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const fail = (res: ServerResponse, status: number, error: string, info: string) => send(res, status, { error, info });

  const handle = async (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const path = (req.url ?? '/').split('?')[0]!;
    calls.push({ method: req.method ?? '', path });
    if (req.headers.authorization !== `Bearer ${apiKey}`)
      return fail(res, 401, 'authentication-error', 'Unauthorized: missing or invalid API key');
    const injected = failures.shift();
    if (injected) return fail(res, injected, injected === 429 ? 'rate-limit-error' : 'server-error', 'injected failure');
    let body: Record<string, unknown> = {};
    if (raw) {
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return fail(res, 400, 'invalid-request-error', 'request body is not valid JSON');
      }
    }
    if (req.method === 'GET' && (path === '/v1/' || path === '/v1')) {
      return send(res, 200, { domain_name: domainName, domain_id: domainId, config: { hide_daily_branding: false } });
    }
    if (path === '/v1/rooms' && req.method === 'POST') {
      const name = typeof body.name === 'string' ? body.name : randomBytes(10).toString('base64url').replace(/[-_]/g, 'x');
      if (!/^[A-Za-z0-9_-]{1,128}$/.test(name))
        return fail(res, 400, 'invalid-request-error', 'name may only contain letters, numbers, - and _');
      if (rooms.has(name)) return fail(res, 400, 'invalid-request-error', `a room named ${name} already exists`);
      const properties = (body.properties ?? {}) as Record<string, unknown>;
      if (properties.exp !== undefined && (typeof properties.exp !== 'number' || properties.exp <= Date.now() / 1000)) {
        return fail(res, 400, 'invalid-request-error', 'exp must be a unix timestamp in the future');
      }
      const room: FakeRoom = {
        id: randomUUID(),
        name,
        api_created: true,
        privacy: String(body.privacy ?? 'public'),
        url: `https://${domainName}.daily.co/${name}`,
        created_at: new Date().toISOString(),
        config: properties,
      };
      rooms.set(name, room);
      return send(res, 200, room);
    }
    if (path === '/v1/rooms' && req.method === 'GET') return send(res, 200, { total_count: rooms.size, data: [...rooms.values()] });
    const roomMatch = /^\/v1\/rooms\/([^/]+)$/.exec(path);
    if (roomMatch) {
      const name = decodeURIComponent(roomMatch[1]!);
      const room = rooms.get(name);
      if (!room) return fail(res, 404, 'not-found', `room ${name} not found`);
      if (req.method === 'GET') return send(res, 200, room);
      if (req.method === 'DELETE') {
        rooms.delete(name);
        return send(res, 200, { deleted: true, name });
      }
    }
    if (path === '/v1/meeting-tokens' && req.method === 'POST') {
      const props = (body.properties ?? {}) as Record<string, unknown>;
      const claims: Record<string, unknown> = { r: props.room_name, d: domainId, iat: Math.floor(Date.now() / 1000) };
      if (props.exp !== undefined) claims.exp = props.exp;
      if (props.is_owner !== undefined) claims.o = props.is_owner;
      if (props.user_name !== undefined) claims.u = props.user_name;
      return send(res, 200, { token: sign(claims, apiKey) });
    }
    return fail(res, 404, 'not-found', `no route ${req.method} ${path}`);
  };

  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => void handle(req, res, raw).catch((err: unknown) => fail(res, 500, 'server-error', String(err))));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    apiKey,
    domainId,
    rooms,
    calls,
    failNext: (status, count = 1) => void (failures = [...failures, ...Array<number>(count).fill(status)]),
    verifyToken(token) {
      const [h, p, s] = token.split('.');
      if (!h || !p || !s) throw new Error('malformed token');
      const expected = createHmac('sha256', apiKey).update(`${h}.${p}`).digest();
      const given = Buffer.from(s, 'base64url');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new Error('bad signature');
      const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
      if (claims.d !== domainId) throw new Error('wrong domain');
      if (typeof claims.r !== 'string' || !rooms.has(claims.r)) throw new Error('unknown room');
      if (typeof claims.exp === 'number' && claims.exp <= Date.now() / 1000) throw new Error('expired');
      return claims;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function sign(claims: Record<string, unknown>, key: string): string {
  const h = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
  const p = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${h}.${p}.${createHmac('sha256', key).update(`${h}.${p}`).digest('base64url')}`;
}
