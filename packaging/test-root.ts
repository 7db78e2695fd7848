/**
 * Debian roots for the package tests (install-test.ts, upgrade-test.ts): a trixie root made once
 * per architecture with mmdebstrap and cached outside the repository (`PRINTER_AGENT_TEST_ROOTS`,
 * default /var/cache/printer-agent-test), and a fresh copy of it per run with /proc and /sys
 * mounted, in which commands run through chroot. Needs root.
 *
 * A root of another architecture (arm64 here) runs every program under Debian's qemu-user-static
 * through binfmt_misc, several times slower. mmdebstrap, not debootstrap: it resolves and unpacks
 * with the host's apt and runs only the maintainer scripts emulated (arm64 root measured here:
 * debootstrap `--foreign` + second stage 16-20 min, mmdebstrap 5-7 min; decision 154).
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** systemd's PATH for services, which finds `printer-agent` and the `node` its shebang asks for. */
export const ROOT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export const sh = (command: string, args: string[], env: NodeJS.ProcessEnv = {}) =>
  execFileSync(command, args, {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive', ...env },
    maxBuffer: 64 * 1024 * 1024,
  });

export interface TestRoot {
  root: string;
  arch: string;
  /** Whether programs in it run emulated (another architecture). */
  foreign: boolean;
  /** `chroot ROOT ARGS`: its stdout; throws with stderr on a non-zero exit. */
  inRoot(args: string[], env?: NodeJS.ProcessEnv): string;
  /** `chroot ROOT sh -c COMMAND 2>&1; echo "exit $?"`: output and exit code, never throws. */
  shellInRoot(command: string, env?: NodeJS.ProcessEnv): { output: string; code: number };
  /**
   * `shellInRoot` without blocking this process: for every command that talks to something this
   * process serves (the emulator on TCP), which a synchronous child would leave unanswered.
   */
  shell(command: string, env?: NodeJS.ProcessEnv): Promise<{ output: string; code: number }>;
  /** Unmounts and removes the copy. */
  remove(): void;
}

/**
 * What a Pi's OS has that matters here: systemd (the unit is enabled offline, as in an image being
 * built), udev, nodejs from Debian, and libatomic1, which the official Node binaries need (a store
 * installing Node from elsewhere installs it too). The cache's name changes when the list does.
 */
const INCLUDE = 'nodejs,ca-certificates,systemd,udev,libatomic1';

export function freshRoot(arch: string): TestRoot {
  if (process.getuid?.() !== 0)
    throw new Error('the package tests need root (mmdebstrap, chroot, apt)');
  const hostArch = sh('dpkg', ['--print-architecture']).trim();
  const foreign = arch !== hostArch;
  const QEMU = { arm64: 'qemu-aarch64' }[arch];
  const binfmt = `/proc/sys/fs/binfmt_misc/${QEMU}`;
  if (
    foreign &&
    !(QEMU && existsSync(binfmt) && readFileSync(binfmt, 'utf8').startsWith('enabled'))
  )
    throw new Error(
      `an ${arch} root needs ${QEMU ?? `qemu for ${arch}`} registered with binfmt_misc: install Debian's qemu-user-static and binfmt-support, then update-binfmts --enable ${QEMU}`,
    );
  const cache = process.env.PRINTER_AGENT_TEST_ROOTS || '/var/cache/printer-agent-test';
  const base = join(cache, `trixie-${arch}-mm-${INCLUDE.split(',').length}`);
  if (!existsSync(join(base, 'usr', 'bin', 'node'))) {
    console.log(`test-root: mmdebstrap trixie ${arch} into ${base} (cached for later runs)`);
    rmSync(base, { recursive: true, force: true });
    // mmdebstrap makes the root's own directory, not the ones above it.
    mkdirSync(cache, { recursive: true });
    sh('mmdebstrap', [
      '--variant=minbase',
      `--arch=${arch}`,
      `--include=${INCLUDE}`,
      'trixie',
      base,
      'http://deb.debian.org/debian',
    ]);
  }
  const root = mkdtempSync(join(cache, `run-${arch}-`));
  const mounted: string[] = [];
  const remove = () => {
    for (const path of mounted.reverse()) sh('umount', ['-l', path]);
    mounted.length = 0;
    rmSync(root, { recursive: true, force: true });
  };
  try {
    // cp -a: the root holds device nodes, which fs.cp cannot copy.
    sh('cp', ['-a', `${base}/.`, root]);
    for (const [type, dir] of [
      ['proc', 'proc'],
      ['sysfs', 'sys'],
    ] as const) {
      sh('mount', ['-t', type, type, join(root, dir)]);
      mounted.push(join(root, dir));
    }
  } catch (error) {
    remove();
    throw error;
  }
  return {
    root,
    arch,
    foreign,
    inRoot: (args, env = {}) => sh('chroot', [root, ...args], env),
    shellInRoot(command, env = {}) {
      const output = sh('chroot', [root, 'sh', '-c', `(${command}) 2>&1; echo "exit $?"`], env);
      const code = Number(/exit (\d+)\n?$/.exec(output)?.[1] ?? -1);
      return { output: output.replace(/exit \d+\n?$/, ''), code };
    },
    shell(command, env = {}) {
      return new Promise((resolve, reject) => {
        const child = spawn('chroot', [root, 'sh', '-c', `(${command}) 2>&1`], {
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive', ...env },
        });
        let output = '';
        child.stdout.on('data', (d: Buffer) => (output += d));
        child.stderr.on('data', (d: Buffer) => (output += d));
        child.once('error', reject);
        child.once('close', (code) => resolve({ output, code: code ?? -1 }));
      });
    },
    remove,
  };
}
