import fc from 'fast-check';

/**
 * Every property test runs from a fixed seed unless it names its own: a red run then repeats, and
 * a green one does not turn red by chance on the next machine (docs/testing.md). To look further,
 * run with another seed: FC_SEED=123 npx vitest run <file>.
 */
const seed = Number(process.env.FC_SEED ?? 19);
fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: Number.isInteger(seed) ? seed : 19 });
