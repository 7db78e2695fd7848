/**
 * A broker for the demo and for trying the agent on one machine: either embedded (aedes, in this
 * process, nothing to install) or a `mosquitto` child process on a free loopback port. Lives in
 * `src/mqtt/` because only this room imports MQTT libraries.
 *
 * aedes speaks MQTT 3.1.1 only (it refuses protocol level 5 at CONNECT), so clients of the
 * embedded broker must use `protocolVersion: 4`; `protocolVersion` on the result says which to
 * use. Mosquitto speaks MQTT 5, the version production brokers run.
 *
 * Neither is a production broker: no TLS, no authentication, no persistence. Both listen on
 * 127.0.0.1 only.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type Server, Socket } from 'node:net';
import { join } from 'node:path';
import { Aedes } from 'aedes';
import { AgentError } from '../errors.js';

export interface RunningBroker {
  /** `mqtt://127.0.0.1:PORT` */
  url: string;
  port: number;
  /** The MQTT version clients should speak: 4 (3.1.1) for aedes, 5 for Mosquitto. */
  protocolVersion: 4 | 5;
  /** What runs it, for people: `embedded aedes 1.2.0, MQTT 3.1.1`. */
  description: string;
  /** Disconnects every client and stops listening (Mosquitto: SIGTERM, then waits for the exit). */
  close(): Promise<void>;
}

/** The embedded broker: aedes on `net.createServer(aedes.handle)`, port 0 = any free port. */
export async function startEmbeddedBroker(
  options: { host?: string; port?: number } = {},
): Promise<RunningBroker> {
  const host = options.host ?? '127.0.0.1';
  const aedes = await Aedes.createBroker();
  const server: Server = createServer(aedes.handle);
  // A client that resets its socket must not take the broker down.
  aedes.on('connectionError', () => {});
  aedes.on('clientError', () => {});
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    await new Promise<void>((resolve) => aedes.close(() => resolve()));
    throw new AgentError(
      'BROKER_UNAVAILABLE',
      `embedded broker: cannot listen on ${host}:${options.port ?? 0} (${(error as NodeJS.ErrnoException).code ?? 'failed'})`,
      { cause: error },
    );
  }
  const port = (server.address() as { port: number }).port;
  let closing: Promise<void> | undefined;
  return {
    url: `mqtt://${host}:${port}`,
    port,
    protocolVersion: 4,
    description: `embedded aedes ${(aedes as unknown as { version: string }).version}, MQTT 3.1.1`,
    close() {
      closing ??= (async () => {
        // aedes first: it ends every client connection, so the server's close can complete.
        await new Promise<void>((resolve) => aedes.close(() => resolve()));
        await new Promise<void>((resolve) => server.close(() => resolve()));
      })();
      return closing;
    },
  };
}

export const MOSQUITTO_MISSING =
  'mosquitto is not installed (Debian package mosquitto: apt-get install mosquitto)';

/** The mosquitto binary on PATH or in /usr/sbin (Debian puts it there), or null. */
export function findMosquitto(): string | null {
  for (const candidate of ['mosquitto', '/usr/sbin/mosquitto']) {
    const probe = spawnSync(candidate, ['-h'], { stdio: 'ignore' });
    if (!probe.error) return candidate;
  }
  return null;
}

async function freePort(host: string): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function accepts(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.connect(port, host);
  });
}

const MOSQUITTO_START_MS = 10_000;

/**
 * Mosquitto as a child process with a config written to `dir`, on a free port of 127.0.0.1.
 * Resolves once the port accepts connections; fails with its output when it exits first (the
 * free port can be taken between our probe and its bind: then it is tried again on another one).
 */
export async function startMosquitto(options: { dir: string }): Promise<RunningBroker> {
  const binary = findMosquitto();
  if (!binary) throw new AgentError('INPUT_INVALID', `--mosquitto: ${MOSQUITTO_MISSING}`);
  const host = '127.0.0.1';
  let lastOutput = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort(host);
    const config = join(options.dir, 'mosquitto.conf');
    writeFileSync(
      config,
      [`listener ${port} ${host}`, 'allow_anonymous true', 'persistence false', ''].join('\n'),
    );
    // Its own process group: Ctrl-C in the terminal must reach only us, so that the agent can
    // still publish its offline status on the way out; we stop mosquitto last.
    const child = spawn(binary, ['-c', config], {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    // And if we exit without close() (an uncaught error), it must not outlive us.
    const orphanGuard = () => child.kill('SIGTERM');
    process.once('exit', orphanGuard);
    child.once('exit', () => process.off('exit', orphanGuard));
    let output = '';
    child.stdout?.on('data', (d: Buffer) => (output += d));
    child.stderr?.on('data', (d: Buffer) => (output += d));
    let spawnError: Error | undefined;
    child.once('error', (error) => (spawnError = error));
    const deadline = Date.now() + MOSQUITTO_START_MS;
    let up = false;
    // Polled: mosquitto announces nothing we could wait for when its log goes to syslog.
    while (!up && child.exitCode === null && child.signalCode === null && !spawnError) {
      up = await accepts(port, host);
      if (!up) {
        if (Date.now() > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
    if (up) return mosquittoBroker(child, port, host);
    await stopChild(child);
    lastOutput = spawnError ? spawnError.message : output.trim();
    if (!/address already in use/i.test(lastOutput)) break;
  }
  throw new AgentError(
    'BROKER_UNAVAILABLE',
    `--mosquitto: mosquitto did not start${lastOutput ? `: ${lastOutput}` : ''}`,
  );
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  return exited;
}

function mosquittoBroker(child: ChildProcess, port: number, host: string): RunningBroker {
  let closing: Promise<void> | undefined;
  return {
    url: `mqtt://${host}:${port}`,
    port,
    protocolVersion: 5,
    description: `mosquitto (pid ${child.pid}), MQTT 5`,
    close() {
      closing ??= stopChild(child);
      return closing;
    },
  };
}
