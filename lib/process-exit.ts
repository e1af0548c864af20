import type { Logger } from './log.ts';

/**
 * How the api-stub and the operator end when something goes wrong, as the worker does
 * (worker/main.ts): one line that says what happened and what to do, and an exit code chosen on
 * purpose. 1: it could not start (configuration, a port in use); 70 (EX_SOFTWARE): a fault reached
 * the top of the process, which then ends rather than run on in an unknown state.
 */
export const EXIT_STARTUP = 1;
export const EXIT_UNCAUGHT = 70;

/** Every handler catches at its own boundary; reaching these means a bug: log it and end. */
export function exitOnUncaught(log: Logger): void {
  for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
    process.on(event, (err: unknown) => {
      log.error(`${event}: exiting so that the process restarts`, { err });
      process.exit(EXIT_UNCAUGHT);
    });
  }
}

interface SystemError extends Error {
  code?: string;
}

/** One sentence for a failed `listen`: the address, the cause and what to change. */
export function describeListenError(err: unknown, address: { host: string; port: number; variable: string }): string {
  const e = err as SystemError;
  const where = `${address.host}:${address.port}`;
  if (e.code === 'EADDRINUSE')
    return `cannot listen on ${where}: the port is already in use (EADDRINUSE); stop what holds it or set ${address.variable} to a free port`;
  if (e.code === 'EACCES') return `cannot listen on ${where}: permission denied (EACCES); use a port above 1023 or grant the capability`;
  if (e.code === 'EADDRNOTAVAIL') return `cannot listen on ${where}: no such local address (EADDRNOTAVAIL); check the host setting`;
  return `cannot listen on ${where}: ${e.code ?? ''}${e.code ? ' ' : ''}${e.message}`;
}

/** Writes `<name>: <line>` to stderr and ends with EXIT_STARTUP. */
export function exitAtStartup(name: string, line: string): never {
  process.stderr.write(`${name}: ${line}\n`);
  process.exit(EXIT_STARTUP);
}
