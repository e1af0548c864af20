import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { objectName, type TranscriptStore } from './transcript-store.ts';

/** Transcripts as files in a folder (`file:///abs/folder`); written atomically via rename. */
export class FileTranscriptStore implements TranscriptStore {
  private readonly dir: string;

  constructor(folderUrl: string) {
    this.dir = fileURLToPath(folderUrl);
  }

  async put(sessionId: string, body: string): Promise<string> {
    await mkdir(this.dir, { recursive: true });
    const path = join(this.dir, objectName(sessionId));
    const tmp = `${path}.${process.pid}.tmp`;
    await writeFile(tmp, body, { mode: 0o640 });
    await rename(tmp, path);
    return pathToFileURL(path).href;
  }
}
