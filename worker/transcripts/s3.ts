import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { WorkerConfig } from '../config.ts';
import { objectName, type TranscriptStore } from './transcript-store.ts';

/**
 * Transcripts in an S3-compatible bucket (`s3://bucket/optional/prefix`). Credentials come from
 * the AWS SDK's standard chain (AWS_ACCESS_KEY_ID, a role, ...); S3_ENDPOINT points it at any
 * compatible store (MinIO, Ceph, R2).
 */
export class S3TranscriptStore implements TranscriptStore {
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly client: S3Client;

  constructor(uri: string, s3: WorkerConfig['s3'], client?: S3Client) {
    const url = new URL(uri);
    this.bucket = url.host;
    this.prefix = url.pathname.replace(/^\/+|\/+$/g, '');
    this.client =
      client ?? new S3Client({ region: s3.region, forcePathStyle: s3.forcePathStyle, ...(s3.endpoint ? { endpoint: s3.endpoint } : {}) });
  }

  async put(sessionId: string, body: string): Promise<string> {
    const key = this.prefix ? `${this.prefix}/${objectName(sessionId)}` : objectName(sessionId);
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: 'application/json' }));
    return `s3://${this.bucket}/${key}`;
  }
}
