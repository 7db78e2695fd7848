/**
 * A linked pty pair from `socat` (dependencies.md): two pseudo-terminals whose bytes socat copies
 * across, with stable symlinks, e.g. `DIR/host` for the agent and `DIR/printer` for the emulator.
 *
 * Why a pty and why this way of opening it:
 * - The agent opens its end exactly as a real serial port (`serialport`) or as a printer device
 *   file (`fs`), so the emulator exercises the agent's real transports. On a pty the DTR/RTS ioctls
 *   fail and the baud rate is not enforced, hence the link's own slow-link pacing.
 * - The emulator's end is opened with `O_RDWR | O_NOCTTY` (never becoming our controlling
 *   terminal) and wrapped in `tty.ReadStream`, which is a `net.Socket` over libuv's tty handle:
 *   libuv reopens the pty slave non-blocking and polls it on the event loop, and the same socket
 *   writes. The alternatives fail: `net.Socket({ fd })` rejects a tty fd (ERR_INVALID_FD_TYPE), and
 *   `fs.createReadStream` on a blocking pty parks a thread-pool thread in `read()` until data comes
 *   (four such reads stall every other fs call), while on a non-blocking fd it fails with EAGAIN.
 * - socat keeps both slaves open itself, so the agent may close and reopen its end at will.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { closeSync, constants, lstatSync, mkdirSync, openSync, unlinkSync } from 'node:fs';
import { resolve } from 'node:path';
import { ReadStream } from 'node:tty';

export const SOCAT_HINT = 'install the Debian package socat (apt-get install socat)';

/** Thrown when `socat` cannot be run. */
export class SocatMissingError extends Error {
  readonly code = 'SOCAT_MISSING';
  constructor(cause?: unknown) {
    super(`socat is not installed or not on PATH: ${SOCAT_HINT}`, { cause });
    this.name = 'SocatMissingError';
  }
}

/** Whether `socat` can be run (tests skip on this). */
export function hasSocat(): boolean {
  const r = spawnSync('socat', ['-V'], { stdio: 'ignore' });
  return !r.error && r.status === 0;
}

export interface PtyPairOptions {
  /** Directory for the two symlinks; created if missing. */
  dir: string;
  /** Name of the host-side link in `dir`. Default `host`. */
  hostName?: string;
  /** Name of the emulator-side link in `dir`. Default `printer`. */
  printerName?: string;
  /** How long to wait for socat to create the links. Default 5000 ms. */
  timeoutMs?: number;
}

export interface PtyPair {
  /** Path the agent opens (a symlink to a /dev/pts slave). */
  readonly hostPath: string;
  /** Path of the emulator's side. */
  readonly printerPath: string;
  readonly pid: number;
  /** The emulator's side, readable and writable, not started (reading begins on 'data'). */
  readonly stream: ReadStream;
  /** Resolves when socat has exited, for whatever reason. */
  readonly exited: Promise<void>;
  /** Closes the emulator's side, kills socat by pid and removes the links. */
  stop(): Promise<void>;
}

function removeLink(path: string): void {
  try {
    if (lstatSync(path).isSymbolicLink()) unlinkSync(path);
  } catch {
    // absent: nothing to remove
  }
}

function linkExists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Spawns socat and opens the printer side once both links exist. */
export async function startPtyPair(options: PtyPairOptions): Promise<PtyPair> {
  const dir = resolve(options.dir);
  mkdirSync(dir, { recursive: true });
  const hostPath = resolve(dir, options.hostName ?? 'host');
  const printerPath = resolve(dir, options.printerName ?? 'printer');
  // Links left by a socat that was killed hard would make us open a dead pty.
  removeLink(hostPath);
  removeLink(printerPath);

  const child: ChildProcess = spawn(
    'socat',
    ['-d', '-d', `pty,raw,echo=0,link=${hostPath}`, `pty,raw,echo=0,link=${printerPath}`],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (s: string) => {
    stderr = (stderr + s).slice(-2000);
  });
  const exited = new Promise<void>((done) => {
    child.once('exit', () => done());
    child.once('error', () => done());
  });

  const started = await new Promise<{ ok: true } | { ok: false; error: Error }>((settle) => {
    const deadline = Date.now() + (options.timeoutMs ?? 5000);
    let finished = false;
    const end = (r: { ok: true } | { ok: false; error: Error }) => {
      if (finished) return;
      finished = true;
      clearInterval(poll);
      settle(r);
    };
    child.once('error', (err: NodeJS.ErrnoException) =>
      end({
        ok: false,
        error: err.code === 'ENOENT' ? new SocatMissingError(err) : err,
      }),
    );
    child.once('exit', (code, signal) =>
      end({
        ok: false,
        error: new Error(`socat exited (${signal ?? code}) before creating the ptys: ${stderr}`),
      }),
    );
    // socat creates the links right after the ptys; a few ms in practice.
    const poll = setInterval(() => {
      if (linkExists(hostPath) && linkExists(printerPath)) end({ ok: true });
      else if (Date.now() > deadline) {
        end({ ok: false, error: new Error(`socat did not create ${hostPath} in time: ${stderr}`) });
      }
    }, 5);
  });
  if (!started.ok) {
    child.kill('SIGTERM');
    await exited;
    removeLink(hostPath);
    removeLink(printerPath);
    throw started.error;
  }

  let stream: ReadStream;
  try {
    const fd = openSync(printerPath, constants.O_RDWR | constants.O_NOCTTY);
    try {
      stream = new ReadStream(fd);
    } catch (err) {
      closeSync(fd);
      throw err;
    }
  } catch (err) {
    child.kill('SIGTERM');
    await exited;
    throw err;
  }
  // Errors (EIO once socat is gone) surface through the link as a close; never as a crash.
  stream.on('error', () => {});

  let stopping: Promise<void> | undefined;
  return {
    hostPath,
    printerPath,
    pid: child.pid!,
    stream,
    exited,
    stop(): Promise<void> {
      stopping ??= (async () => {
        stream.destroy();
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGTERM');
          // socat exits at once on SIGTERM; a wedged one must not hang our shutdown.
          const hard = setTimeout(() => child.kill('SIGKILL'), 2000);
          await exited;
          clearTimeout(hard);
        }
        // socat removes its links on SIGTERM; make sure, so a stale path never lingers.
        removeLink(hostPath);
        removeLink(printerPath);
      })();
      return stopping;
    },
  };
}
