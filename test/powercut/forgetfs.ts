/**
 * A mounted forgetfs (forgetfs.c): a directory that forgets like a power cut. Test tooling for
 * issue 39. `ForgetFs.mount()` builds the daemon once per source state, mounts a fresh backing
 * directory, and offers `cut()` (every unsynced write dropped, every name change not yet durable
 * undone), `arm()` (a power cut at the N-th operation of a kind on a file: its caller killed
 * first), `stats()` and `remount()` (the reboot: a new daemon on the same card).
 *
 * Mounting needs /dev/fuse and root (or fusermount3); building needs libfuse3-dev.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCTool, compilerSkip } from '../helpers/c-tools.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const CONTROL = '.forgetfs';

function fuseFlags(): string[] | null {
  const r = spawnSync('pkg-config', ['--cflags', '--libs', 'fuse3'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim().split(/\s+/) : null;
}

/** Why forgetfs cannot run here, or false. */
export function forgetfsSkip(): string | false {
  if (process.platform !== 'linux') return 'forgetfs needs Linux (FUSE)';
  if (!existsSync('/dev/fuse')) return 'forgetfs needs /dev/fuse (FUSE in the kernel)';
  if (process.getuid?.() !== 0)
    return 'forgetfs mounts as root (run the tests as root, as CI does)';
  const noCompiler = compilerSkip();
  if (noCompiler) return `forgetfs ${noCompiler}`;
  if (!fuseFlags()) return 'forgetfs is built against libfuse3: install libfuse3-dev and fuse3';
  return false;
}

function binary(): string {
  const flags = fuseFlags() ?? [];
  return buildCTool({
    name: 'forgetfs',
    sources: [join(HERE, 'forgetfs.c')],
    outputs: { forgetfs: ['-O2', '-Wall', '-o', '{out}', join(HERE, 'forgetfs.c'), ...flags] },
  }).forgetfs!;
}

/** Where backing directories go: tmpfs when there is one (the layer models the card itself). */
function scratch(): string {
  return existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
}

export interface ForgetFsStats {
  writes: number;
  fsyncs: number;
  dirsyncs: number;
  cuts: number;
  torn: number;
  dropped_pages: number;
  undone: number;
  pending_names: number;
  armed: number;
  fired: number;
}

export class ForgetFs {
  private daemon: ChildProcess | null = null;
  private output = '';

  private constructor(
    /** Where the files really are: the card. */
    readonly backing: string,
    /** Where the processes under test see them. */
    readonly mountpoint: string,
  ) {}

  /** Mounts a new, empty card (or `backing`, a card that already has files). */
  static async mount(options: { backing?: string } = {}): Promise<ForgetFs> {
    const backing = options.backing ?? mkdtempSync(join(scratch(), 'pa-card-'));
    const mountpoint = mkdtempSync(join(tmpdir(), 'pa-mount-'));
    const fs = new ForgetFs(backing, mountpoint);
    await fs.start();
    return fs;
  }

  private async start(): Promise<void> {
    const daemon = spawn(binary(), [this.backing, this.mountpoint], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    daemon.stdout?.on('data', (d: Buffer) => (this.output += d));
    daemon.stderr?.on('data', (d: Buffer) => (this.output += d));
    this.daemon = daemon;
    // Mounted once the control file answers (a deadline, not a measurement).
    const deadline = Date.now() + 10_000;
    while (!this.mounted()) {
      if (daemon.exitCode !== null || Date.now() > deadline)
        throw new Error(`forgetfs did not mount ${this.mountpoint}: ${this.output}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  private mounted(): boolean {
    try {
      return readFileSync('/proc/mounts', 'utf8').includes(` ${this.mountpoint} fuse.forgetfs `);
    } catch {
      return false;
    }
  }

  /** A path in the mount. */
  path(...parts: string[]): string {
    return join(this.mountpoint, ...parts);
  }

  private control(command: string): void {
    writeFileSync(join(this.mountpoint, CONTROL), `${command}\n`);
  }

  /** The power goes: unsynced data dropped, name changes not yet durable undone. */
  cut(options: { torn?: boolean } = {}): void {
    this.control(options.torn ? 'cut torn' : 'cut');
  }

  /**
   * The power goes at the `n`-th `op` on a file whose path ends with `suffix`, before it is done:
   * its caller is killed (SIGKILL), then the cut. `stats().fired` says whether it happened.
   */
  arm(
    op: 'write' | 'fsync' | 'fsyncdir' | 'rename' | 'create' | 'unlink',
    suffix: string,
    n = 1,
    options: { torn?: boolean } = {},
  ): void {
    this.control(`arm ${op} ${suffix} ${n}${options.torn ? ' torn' : ''}`);
  }

  disarm(): void {
    this.control('disarm');
  }

  /** Seeds the torn page's length, so a failing run can be replayed. */
  seed(n: number): void {
    this.control(`seed ${n >>> 0}`);
  }

  stats(): ForgetFsStats {
    const text = readFileSync(join(this.mountpoint, CONTROL), 'utf8');
    return Object.fromEntries(
      text
        .trim()
        .split('\n')
        .map((line) => {
          const [key, value] = line.split(' ');
          return [key!, Number(value)];
        }),
    ) as unknown as ForgetFsStats;
  }

  /**
   * Unmounts (every process with files open on it must be gone) and stops the daemon: what it
   * held unsynced is lost with it.
   */
  async unmount(): Promise<void> {
    const daemon = this.daemon;
    if (!daemon) return;
    this.daemon = null;
    const exited = new Promise<void>((resolve) => {
      if (daemon.exitCode !== null || daemon.signalCode !== null) resolve();
      else daemon.once('exit', () => resolve());
    });
    const r = spawnSync('umount', [this.mountpoint], { encoding: 'utf8' });
    if (r.status !== 0) {
      // Still busy (a process the test did not stop): the lazy way, so the test can go on.
      spawnSync('umount', ['-l', this.mountpoint]);
    }
    const timer = setTimeout(() => daemon.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }

  /** The reboot: unmount, then a new daemon on the same card at the same mountpoint. */
  async remount(): Promise<void> {
    await this.unmount();
    await this.start();
  }

  /** Unmounts and removes the card and the mountpoint. */
  async destroy(): Promise<void> {
    await this.unmount();
    rmSync(this.backing, { recursive: true, force: true });
    rmSync(this.mountpoint, { recursive: true, force: true });
  }

  /** The daemon's own output, for a failure message. */
  log(): string {
    return this.output;
  }
}

export function ensureDir(path: string): string {
  mkdirSync(path, { recursive: true });
  return path;
}
