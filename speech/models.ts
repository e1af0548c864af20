import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Where the model files are, checked before anything loads: a server without them refuses to
 * start and says how to get them, rather than failing inside the native library.
 */
export interface SpeechModelFiles {
  moonshine: { encoder: string; mergedDecoder: string; tokens: string };
  piper: { model: string; tokens: string; dataDir: string };
}

export class MissingModelsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MissingModelsError';
  }
}

export function resolveSpeechModels(modelsDir: string, espeakDataDir: string): SpeechModelFiles {
  const files: SpeechModelFiles = {
    moonshine: {
      encoder: join(modelsDir, 'moonshine-base-en', 'encoder_model.ort'),
      mergedDecoder: join(modelsDir, 'moonshine-base-en', 'decoder_model_merged.ort'),
      tokens: join(modelsDir, 'moonshine-base-en', 'tokens.txt'),
    },
    piper: {
      model: join(modelsDir, 'piper-joe-medium', 'en_US-joe-medium.onnx'),
      tokens: join(modelsDir, 'piper-joe-medium', 'tokens.txt'),
      dataDir: espeakDataDir,
    },
  };
  const missing = [...Object.values(files.moonshine), files.piper.model, files.piper.tokens].filter((f) => !existsSync(f));
  if (missing.length > 0) {
    throw new MissingModelsError(
      `the speech models are missing (${missing.join(', ')}): run \`bash scripts/speech-models.sh\` and set SPEECH_MODELS_DIR to the directory it prints`,
    );
  }
  if (!existsSync(join(espeakDataDir, 'phontab'))) {
    throw new MissingModelsError(
      `espeak-ng data is missing at ${espeakDataDir} (the Piper voice needs it): install Debian's espeak-ng-data or set SPEECH_ESPEAK_DATA_DIR`,
    );
  }
  return files;
}
