import { readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeS3, type FakeS3 } from '../../test/fakes/s3.ts';
import { createTranscriptStore } from './store.ts';

/** Transcript stores: a folder, and an S3-compatible endpoint through the AWS SDK. */
let s3: FakeS3;
beforeAll(async () => {
  s3 = await startFakeS3();
  process.env.AWS_ACCESS_KEY_ID = s3.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = 'fake-secret';
});
afterAll(() => s3.close());

describe('transcript stores', () => {
  it('writes a file and answers its file:// URI', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'store-'));
    const store = createTranscriptStore({
      transcriptStore: pathToFileURL(dir).href,
      s3: { endpoint: null, region: 'us-east-1', forcePathStyle: false },
    });
    const key = await store.put('inv_abc', '{"turns":[]}');
    expect(key).toBe(pathToFileURL(join(dir, 'inv_abc.json')).href);
    expect(readFileSync(fileURLToPath(key), 'utf8')).toBe('{"turns":[]}');
  });

  it('puts an object through the AWS SDK at a configured endpoint and answers its s3:// URI', async () => {
    const store = createTranscriptStore({
      transcriptStore: 's3://transcripts/worker-a',
      s3: { endpoint: s3.url, region: 'eu-west-1', forcePathStyle: true },
    });
    const key = await store.put('inv_xyz', '{"summary":"ok"}');
    expect(key).toBe('s3://transcripts/worker-a/inv_xyz.json');
    const object = s3.objects.get('transcripts/worker-a/inv_xyz.json');
    expect(object?.body.toString()).toBe('{"summary":"ok"}');
    expect(object?.contentType).toBe('application/json');
  });

  it('refuses a session id that could escape the folder or bucket prefix', async () => {
    const store = createTranscriptStore({
      transcriptStore: pathToFileURL(mkdtempSync(join(tmpdir(), 'store-'))).href,
      s3: { endpoint: null, region: 'us-east-1', forcePathStyle: false },
    });
    await expect(store.put('../etc/passwd', 'x')).rejects.toThrow(/malformed session id/);
  });
});
