import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small S3-compatible object store for tests: path-style PUT and GET of objects, requests must
 * carry an AWS Signature V4 `Authorization` header naming the expected access key (the signature
 * itself is not recomputed). Bodies sent with `aws-chunked` content encoding are decoded.
 * Errors use S3's XML shape.
 */
export interface FakeS3 {
  url: string;
  accessKeyId: string;
  objects: Map<string, { body: Buffer; contentType: string | undefined }>;
  close(): Promise<void>;
}

function decodeAwsChunked(raw: Buffer): Buffer {
  const out: Buffer[] = [];
  let pos = 0;
  while (pos < raw.length) {
    const lineEnd = raw.indexOf('\r\n', pos);
    if (lineEnd < 0) break;
    const size = parseInt(raw.subarray(pos, lineEnd).toString().split(';')[0]!, 16);
    if (!size) break;
    out.push(raw.subarray(lineEnd + 2, lineEnd + 2 + size));
    pos = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(out);
}

export async function startFakeS3(options: { accessKeyId?: string } = {}): Promise<FakeS3> {
  const accessKeyId = options.accessKeyId ?? 'AKIAFAKETEST';
  const objects = new Map<string, { body: Buffer; contentType: string | undefined }>();
  const xmlError = (code: string, message: string) =>
    `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const auth = String(req.headers.authorization ?? '');
      if (!auth.startsWith('AWS4-HMAC-SHA256') || !auth.includes(`Credential=${accessKeyId}/`)) {
        res.writeHead(403, { 'content-type': 'application/xml' });
        return res.end(xmlError('InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.'));
      }
      const key = decodeURIComponent((req.url ?? '/').split('?')[0]!.slice(1));
      if (req.method === 'PUT') {
        let body: Buffer = Buffer.concat(chunks);
        if (
          String(req.headers['content-encoding'] ?? '').includes('aws-chunked') ||
          String(req.headers['x-amz-content-sha256'] ?? '').startsWith('STREAMING-')
        )
          body = decodeAwsChunked(body);
        objects.set(key, { body, contentType: req.headers['content-type'] });
        res.writeHead(200, { etag: '"fake"' });
        return res.end();
      }
      const object = objects.get(key);
      if (req.method === 'GET' && object) {
        res.writeHead(200, { 'content-type': object.contentType ?? 'application/octet-stream' });
        return res.end(object.body);
      }
      res.writeHead(404, { 'content-type': 'application/xml' });
      res.end(xmlError('NoSuchKey', 'The specified key does not exist.'));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    accessKeyId,
    objects,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
