import express from 'express';
import { randomUUID } from 'node:crypto';

/**
 * The baseline of bench/api-stub.bench.ts: Express with its JSON body parser and a handler that
 * answers 201 with a session-shaped body, and no validation, storage or rate caps.
 * Prints `{"port": N}` once listening.
 */
const app = express();
app.use(express.json({ limit: '64kb' }));
app.post('/api/v2/sdk/sessions', (req, res) => {
  const id = `inv_${randomUUID().replaceAll('-', '').slice(0, 20)}`;
  res
    .status(201)
    .json({ sessionId: id, sessionUrl: `http://127.0.0.1/s/${id}?from=sdk`, expiresAt: new Date().toISOString(), echo: typeof req.body });
});
// The bench reads this process's CPU time per round (not part of the baseline's work).
app.get('/__cpu', (_req, res) => {
  res.json(process.cpuUsage());
});
const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
