import type { InferenceSession } from 'onnxruntime-node';

/**
 * One ONNX Runtime session for a turn model, sized for many bots per machine: CPU only, one thread
 * for the operators and one for the graph, and no spin-waiting (an idle spinning pool burns a core
 * per bot between frames).
 */
export async function openModelSession(path: string): Promise<InferenceSession> {
  const { InferenceSession } = await import('onnxruntime-node');
  return InferenceSession.create(path, {
    executionProviders: ['cpu'],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    extra: { session: { intra_op: { allow_spinning: '0' }, inter_op: { allow_spinning: '0' } } },
  });
}
