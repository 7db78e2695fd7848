/**
 * Network namespaces a test makes for itself (issue 41 item 5): a private network stack with its
 * own interfaces, addresses and port 5353, where a test can put hosts that loopback cannot play
 * (one that drops SYNs, one on another link) and nothing it sends reaches a real network. Needs
 * root and `ip` (Debian package iproute2; `.ci/run` installs it). Names carry the test process's
 * pid, so parallel test files never collide, and a run killed before its cleanup leaves names that
 * the next run removes (their pid is gone).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';

const PREFIX = 'pa-test-';

/** The `ip` command's path (it is in /usr/sbin, which a non-login PATH may lack), or null. */
export function ipCommand(): string | null {
  for (const dir of [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/sbin', '/usr/bin']) {
    if (dir && existsSync(`${dir}/ip`)) return `${dir}/ip`;
  }
  return null;
}

/** Why namespace tests cannot run here (for `describe`'s `skip`), or false when they can. */
export function netnsSkipReason(): string | false {
  if (ipCommand() === null) return 'needs the ip command: install the Debian package iproute2';
  if (process.getuid?.() !== 0) {
    return 'needs root to make network namespaces (ip netns, Debian package iproute2)';
  }
  return false;
}

/** `ip ARGS`; throws with ip's own message when it fails. */
export function ip(...args: string[]): string {
  const command = ipCommand();
  if (command === null) throw new Error('no ip command (Debian package iproute2)');
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? '';
    throw new Error(`ip ${args.join(' ')}: ${stderr.trim() || (error as Error).message}`);
  }
}

/**
 * The argv that runs `argv` inside namespace `ns` (for spawn): `ip netns exec` enters it and
 * execs the program, so the child's pid is the program's own.
 */
export function inNamespace(ns: string, argv: readonly string[]): [string, string[]] {
  const command = ipCommand();
  if (command === null) throw new Error('no ip command (Debian package iproute2)');
  return [command, ['netns', 'exec', ns, ...argv]];
}

export interface Namespaces {
  /** The full name of the namespace made for `role`. */
  name(role: string): string;
  /** Deletes every namespace made; safe to call twice, and after a half-made setup. */
  remove(): void;
}

/**
 * Makes one empty namespace per role (`lo` up, IPv6 off: no router solicitation, duplicate
 * address detection or MLD report goes out by itself, so an interface counts only what the test
 * sends). Removes, first, namespaces that dead test processes left.
 */
export function makeNamespaces(roles: readonly string[]): Namespaces {
  pruneAbandoned();
  const run = `${PREFIX}${process.pid}-${randomBytes(3).toString('hex')}`;
  const made: string[] = [];
  const namespaces: Namespaces = {
    name: (role) => `${run}-${role}`,
    remove() {
      for (const ns of made.splice(0)) {
        try {
          ip('netns', 'delete', ns);
        } catch {
          // Already gone: removing is what was wanted.
        }
      }
    },
  };
  try {
    for (const role of roles) {
      const ns = namespaces.name(role);
      ip('netns', 'add', ns);
      made.push(ns);
      // /proc/sys/net shows the namespace of the process reading it: written from inside.
      ip(
        'netns',
        'exec',
        ns,
        'sh',
        '-c',
        'echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6 && echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6',
      );
      ip('-n', ns, 'link', 'set', 'lo', 'up');
    }
  } catch (error) {
    namespaces.remove();
    throw error;
  }
  return namespaces;
}

/** Packets interface `dev` of namespace `ns` has sent so far. */
export function sentPackets(ns: string, dev: string): number {
  const [link] = JSON.parse(ip('-n', ns, '-s', '-j', 'link', 'show', 'dev', dev)) as Array<{
    stats64: { tx: { packets: number } };
  }>;
  if (!link) throw new Error(`no interface ${dev} in ${ns}`);
  return link.stats64.tx.packets;
}

function pruneAbandoned(): void {
  for (const line of ip('netns', 'list').split('\n')) {
    const name = line.split(' ')[0] ?? '';
    const pid = Number(/^pa-test-(\d+)-/.exec(name)?.[1]);
    if (!pid || pid === process.pid || alive(pid)) continue;
    try {
      ip('netns', 'delete', name);
    } catch {
      // Another run pruned it first.
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
