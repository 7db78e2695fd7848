/**
 * Waiting helpers for the endpoint tests: they wait for events or conditions with a deadline,
 * never for a fixed time, so the tests are as fast as the machine and fail with a clear message.
 */
import { spawnSync } from 'node:child_process';
import { connect, type Socket } from 'node:net';

/**
 * The default deadline. Generous on purpose: it costs nothing while the test passes (the wait ends
 * with the event), and CI runs on a 2-core machine that may be busy (issue 14).
 */
export const DEADLINE_MS = 20_000;

/**
 * Polls `condition` until it is true; rejects after `ms` with `what` in the message. Every 5 ms at
 * first, then less often the longer it waits (at most every 50 ms): a short wait stays quick,
 * and a long one does not take the CPU the process under test needs on a busy 2-core machine
 * (conditions may read a whole log or re-render the paper).
 */
export async function waitFor(
  what: string,
  condition: () => boolean | Promise<boolean>,
  ms = DEADLINE_MS,
): Promise<void> {
  const start = Date.now();
  const end = start + ms;
  while (!(await condition())) {
    const now = Date.now();
    if (now > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, Math.min(50, 5 + Math.floor((now - start) / 20))));
  }
}

/** Anything with on/off: Node emitters, and the VirtualPrinter (which has no once). */
interface On<A extends unknown[]> {
  on(event: string, listener: (...args: A) => void): unknown;
  off(event: string, listener: (...args: A) => void): unknown;
}

/** The next `event` from `emitter`, with a deadline. Works with typed emitters and plain ones. */
export function next<A extends unknown[] = unknown[]>(
  emitter: On<A>,
  event: string,
  ms = DEADLINE_MS,
): Promise<A> {
  return new Promise((resolve, reject) => {
    const listener = (...args: A) => {
      clearTimeout(timer);
      emitter.off(event, listener);
      resolve(args);
    };
    const timer = setTimeout(() => {
      emitter.off(event, listener);
      reject(new Error(`timed out after ${ms} ms waiting for '${event}'`));
    }, ms);
    emitter.on(event, listener);
  });
}

/** A TCP client as the agent would open it, collecting everything the printer sends back. */
export interface Client {
  socket: Socket;
  received: number[];
  closed: boolean;
  /** Waits until at least `n` bytes have come back in total. */
  bytes(n: number): Promise<number[]>;
}

export async function tcpClient(port: number, host = '127.0.0.1'): Promise<Client> {
  const socket = connect({ port, host, noDelay: true });
  const client: Client = {
    socket,
    received: [],
    closed: false,
    async bytes(n: number) {
      await waitFor(`${n} reply bytes`, () => client.received.length >= n);
      return client.received.slice(0, n);
    },
  };
  socket.on('data', (d: Buffer) => client.received.push(...d));
  socket.on('error', () => {});
  socket.on('close', () => {
    client.closed = true;
  });
  await next(socket, 'connect');
  return client;
}

export const SOCAT_SKIP = 'needs socat (Debian package socat)';

/** `false` to run, or the skip message when socat is not on PATH. */
export function skipWithoutSocat(): false | string {
  const r = spawnSync('socat', ['-V'], { stdio: 'ignore' });
  return r.error || r.status !== 0 ? SOCAT_SKIP : false;
}

/**
 * Retries `attempt` until it resolves, polling every 20 ms, and rejects with its last error
 * after `ms`: for operations that fail while a link comes back (reopening a replugged port).
 */
export async function eventually<T>(
  what: string,
  attempt: () => Promise<T>,
  ms = DEADLINE_MS,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() > end)
        throw new Error(`timed out after ${ms} ms waiting for ${what}: ${String(error)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}
