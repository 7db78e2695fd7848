/**
 * Which hosts are this machine, decided without asking DNS: DNS is exactly what an attacker on the
 * store network (or a rebinding web page) can answer. One rule set for every room that needs it:
 * catch-up's http exception (print-protocol v1.1 §8), the emulator's control server and its
 * listen address.
 */
import { BlockList, isIP } from 'node:net';

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** True for 127.0.0.0/8 and ::1, IPv4-mapped forms included (a literal or resolved address). */
export function isLoopbackAddress(address: string): boolean {
  const a = address.replace(/^\[|\]$/g, '');
  const family = isIP(a);
  if (family === 0) return false;
  // BlockList matches IPv4-mapped IPv6 (::ffff:7f00:1) against the IPv4 subnet.
  return LOOPBACK.check(a, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * A destination host (`URL.hostname`, a listen address) that names this machine: a loopback
 * address, `localhost`, or a name under `.localhost` (RFC 6761). A client that connects to such a
 * name must still check what it resolved to (a hosts file can say otherwise).
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return isLoopbackAddress(host);
}

/**
 * A `Host` header a loopback server may answer: `127.0.0.1:9101`, `localhost:9101`, `[::1]:9101`
 * (any loopback address), with exactly the server's port (a browser leaves out port 80). Stricter
 * than `isLoopbackHost`: only `localhost` itself, because `localhost.` or `x.localhost` may go to
 * a DNS resolver, and a rebinding page arrives under a name of its own.
 */
export function isLoopbackAuthority(authority: string, port: number): boolean {
  const m = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/i.exec(authority.trim());
  if (!m) return false;
  const name = m[1]!.toLowerCase();
  if ((m[2] === undefined ? 80 : Number(m[2])) !== port) return false;
  return name === 'localhost' || isLoopbackAddress(name);
}
