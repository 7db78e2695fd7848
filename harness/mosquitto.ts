/**
 * A real Mosquitto per test suite, on a free port, with a tiny config (dependencies.md): it is
 * started as a child process and stopped by pid. Tests that need it skip, naming the Debian
 * package, when it is not installed.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const MOSQUITTO_SKIP = 'needs mosquitto (Debian package mosquitto)';

function mosquittoPath(): string | null {
  for (const candidate of ['mosquitto', '/usr/sbin/mosquitto']) {
    const r = spawnSync(candidate, ['-h'], { stdio: 'ignore' });
    if (!r.error) return candidate;
  }
  return null;
}

/** `false` to run, or the skip message. */
export function skipWithoutMosquitto(): false | string {
  return mosquittoPath() ? false : MOSQUITTO_SKIP;
}

/** A TCP port free on 127.0.0.1 right now (for a server a test starts). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/** Whether something accepts TCP connections on 127.0.0.1:`port` now. */
export async function reachable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = new Socket();
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
    s.connect(port, '127.0.0.1');
  });
}

/**
 * A second listener with TLS (127.0.0.1 only), next to the plain one the test's own clients use.
 * Files are read by Mosquitto after it dropped to its own user: they must be world-readable
 * (test/helpers/test-ca.ts makes them so).
 */
export interface MosquittoTls {
  /** The broker's certificate and key. */
  certFile: string;
  keyFile: string;
  /** The CA that client certificates must chain to (Mosquitto wants one even without them). */
  caFile: string;
  /** `require_certificate true`: refuse clients without a certificate from `caFile`. */
  requireCertificate?: boolean;
}

/**
 * Authentication and ACL from files instead of anonymous access: `allow_anonymous false`. Mosquitto
 * reads them after dropping to its own user when started as root: they must be world-readable.
 */
export interface MosquittoAuth {
  passwordFile: string;
  aclFile: string;
}

export class Mosquitto {
  private child: ChildProcess | null = null;
  log = '';
  /** The TLS listener's port, when started with `tls`. */
  tlsPort: number | null = null;
  private tls: MosquittoTls | null = null;
  private configLines: string[] = [];

  private constructor(
    readonly port: number,
    private readonly config: string,
    private readonly binary: string,
  ) {}

  get url(): string {
    return `mqtt://127.0.0.1:${this.port}`;
  }

  /** The broker's process id while it runs (the fleet simulation reads its CPU and memory). */
  get pid(): number | null {
    return this.child?.exitCode === null ? (this.child.pid ?? null) : null;
  }

  /** `mqtts://localhost:PORT` (a host name, so the certificate's name is checked as in a store). */
  get tlsUrl(): string {
    if (this.tlsPort === null) throw new Error('mosquitto: started without tls');
    return `mqtts://localhost:${this.tlsPort}`;
  }

  /**
   * Other TLS files for the TLS listener from the next `restart()` on (same port): a broker that
   * presents another certificate, or starts requiring client certificates.
   */
  useTls(tls: MosquittoTls): void {
    if (this.tlsPort === null) throw new Error('mosquitto: started without tls');
    this.tls = tls;
    this.writeConfig();
  }

  private tlsLines(): string[] {
    const tls = this.tls;
    if (!tls || this.tlsPort === null) return [];
    return [
      `listener ${this.tlsPort} 127.0.0.1`,
      `cafile ${tls.caFile}`,
      `certfile ${tls.certFile}`,
      `keyfile ${tls.keyFile}`,
      `require_certificate ${tls.requireCertificate ? 'true' : 'false'}`,
    ];
  }

  private writeConfig(): void {
    writeFileSync(this.config, [...this.configLines, ...this.tlsLines(), ''].join('\n'));
  }

  /**
   * `extraConfig` lines go after the listener line, so listener options (TLS files,
   * `require_certificate`...) apply to it; global ones (`message_size_limit`) work too.
   */
  static async start(
    options: {
      persistence?: boolean;
      extraConfig?: readonly string[];
      tls?: MosquittoTls;
      auth?: MosquittoAuth;
    } = {},
  ): Promise<Mosquitto> {
    const binary = mosquittoPath();
    if (!binary) throw new Error(MOSQUITTO_SKIP);
    const dir = mkdtempSync(join(tmpdir(), 'pa-mosquitto-'));
    // Started as root, mosquitto drops to its own user: it must be able to write its persistence
    // database here, or a restart silently loses every session.
    chmodSync(dir, 0o777);
    const port = await freePort();
    const config = join(dir, 'mosquitto.conf');
    const broker = new Mosquitto(port, config, binary);
    broker.configLines = [
      `listener ${port} 127.0.0.1`,
      ...(options.auth
        ? [
            'allow_anonymous false',
            `password_file ${options.auth.passwordFile}`,
            `acl_file ${options.auth.aclFile}`,
          ]
        : ['allow_anonymous true']),
      `persistence ${options.persistence ? 'true' : 'false'}`,
      options.persistence ? `persistence_location ${dir}/` : '',
      'log_dest stdout',
      'max_queued_messages 10000',
      ...(options.extraConfig ?? []),
    ];
    if (options.tls) {
      broker.tlsPort = await freePort();
      broker.tls = options.tls;
    }
    broker.writeConfig();
    await broker.restart();
    return broker;
  }

  /** Starts (again) on the same port: a broker restart. */
  async restart(): Promise<void> {
    if (this.child) await this.stop();
    const child = spawn(this.binary, ['-c', this.config], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (d: Buffer) => (this.log += d));
    child.stderr?.on('data', (d: Buffer) => (this.log += d));
    this.child = child;
    const end = Date.now() + 10_000;
    while (
      !(await reachable(this.port)) ||
      (this.tlsPort !== null && !(await reachable(this.tlsPort)))
    ) {
      if (Date.now() > end || child.exitCode !== null)
        throw new Error(`mosquitto did not start:\n${this.log}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /**
   * SIGHUP: Mosquitto reads its password and ACL files again. It says nothing when done: callers
   * wait for the effect (a new user that can connect).
   */
  reload(): void {
    if (!this.child || this.child.exitCode !== null) throw new Error('mosquitto: not running');
    this.child.kill('SIGHUP');
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    await exited;
  }
}
