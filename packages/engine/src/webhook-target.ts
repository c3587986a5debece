import { lookup as dnsLookup } from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Whether `address` is a public unicast address: ipaddr.js classifies it (private, loopback,
 * link-local, CGNAT, reserved, multicast, …: anything but `unicast` is refused), and an IPv6
 * address that carries an IPv4 one (mapped, IPv4-compatible, NAT64 `64:ff9b::/96`, SIIT, 6to4) is
 * judged by the IPv4 address it reaches. Teredo and local-use NAT64 (`64:ff9b:1::/48`) are refused
 * outright: their embedded address is obfuscated or site-defined.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv4') return ip.range() === 'unicast';
  const v6 = ip as ipaddr.IPv6;
  const embedded = embeddedIPv4(v6);
  if (embedded === 'refuse') return false;
  if (embedded) return embedded.range() === 'unicast';
  return v6.range() === 'unicast';
}

const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 255, lo >> 8, lo & 255]);

/** The IPv4 address an IPv6 one reaches, `null` if none, `refuse` if it cannot be told. */
function embeddedIPv4(ip: ipaddr.IPv6): ipaddr.IPv4 | 'refuse' | null {
  const p = ip.parts;
  switch (ip.range()) {
    case 'ipv4Mapped': // ::ffff:a.b.c.d
    case 'rfc6145': // ::ffff:0:a.b.c.d
      return v4(p[6]!, p[7]!);
    case 'rfc6052': // 64:ff9b::a.b.c.d; the local-use 64:ff9b:1::/48 places it as the site likes
      return p[2] === 0 ? v4(p[6]!, p[7]!) : 'refuse';
    case '6to4': // 2002:AABB:CCDD::
      return v4(p[1]!, p[2]!);
    case 'teredo':
      return 'refuse';
    default:
      // IPv4-compatible ::a.b.c.d (deprecated, still routed by some stacks).
      return p.slice(0, 6).every((x) => x === 0) ? v4(p[6]!, p[7]!) : null;
  }
}

/** The error code of a target `WebhookTargetPolicy.lookup` refused (a delivery not to retry). */
export const REFUSED_TARGET = 'EWEBHOOKTARGET';

/**
 * Names that mean this machine: RFC 6761's `localhost` and everything under it, and the aliases
 * distributions' `/etc/hosts` give loopback. Refused by name, before any lookup.
 */
const LOOPBACK_NAMES = new Set([
  'localhost',
  'localhost.localdomain',
  'localhost4',
  'localhost4.localdomain4',
  'localhost6',
  'localhost6.localdomain6',
  'ip6-localhost',
  'ip6-loopback',
]);

/**
 * A host as resolvers treat it: lower case, without IPv6 brackets and without the root's
 * trailing dot(s) (`localhost.` is `localhost`, `Hooks.Example.` is `hooks.example`). Both
 * checks compare this form, so a name refused or allowed at submit is refused or allowed the
 * same way at delivery.
 * @example targetHost('LocalHost.') // 'localhost'
 */
export function targetHost(hostname: string): string {
  return hostname
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.+$/, '');
}

/**
 * Decides which webhook targets are allowed. Any address but a public unicast one (and `localhost`)
 * is refused unless the allow-list (`LONGRUN_WEBHOOK_ALLOW`: hosts, IPs or CIDRs) names them. URLs
 * are checked when a task is submitted; hostnames are checked again on every delivery, after DNS
 * resolution and before any connection (so DNS rebinding cannot reach a private address).
 */
export class WebhookTargetPolicy {
  private readonly allowed = new BlockList();
  private readonly allowedHosts = new Set<string>();

  /** @example new WebhookTargetPolicy(['127.0.0.1', '10.0.0.0/8', 'hooks.internal']) */
  constructor(allow: readonly string[] = []) {
    for (const raw of allow.map((s) => targetHost(s.trim())).filter(Boolean)) {
      const [address = '', bits] = raw.split('/');
      const type = isIP(address) === 6 ? 'ipv6' : isIP(address) === 4 ? 'ipv4' : null;
      if (type && bits !== undefined) this.allowed.addSubnet(address, Number(bits), type);
      else if (type) this.allowed.addAddress(address, type);
      else this.allowedHosts.add(raw);
    }
  }

  /** Why `url` may not be a webhook target, or `null` when it may (pure: no DNS, no connection). */
  refuseUrl(url: string): string | null {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return 'is not a URL';
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'must be http or https';
    if (parsed.username || parsed.password) return 'must not contain credentials';
    const host = targetHost(parsed.hostname);
    if (!host) return 'has no host';
    if (this.allowedHosts.has(host)) return null;
    if (isIP(host))
      return this.addressAllowed(host) ? null : 'targets a private or loopback address';
    if (LOOPBACK_NAMES.has(host) || host.endsWith('.localhost')) return 'targets localhost';
    // Any other name is resolved at delivery, and refused then if it reaches such an address.
    return null;
  }

  /** Whether a resolved address may be connected to. */
  addressAllowed(address: string): boolean {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
    const ip = mapped ?? address;
    const type = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
    if (this.allowed.check(ip, type)) return true;
    return isPublicAddress(address);
  }

  /**
   * A `lookup` for `http.request` that resolves, then refuses forbidden addresses before the
   * socket connects. Hosts on the allow-list skip the address check.
   */
  lookup = (
    hostname: string,
    options: LookupOptions,
    callback: (
      err: NodeJS.ErrnoException | null,
      address: string | LookupAddress[],
      family?: number,
    ) => void,
  ): void => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses as LookupAddress[];
      const trusted = this.allowedHosts.has(targetHost(hostname));
      const bad = trusted ? undefined : list.find((a) => !this.addressAllowed(a.address));
      if (bad || list.length === 0) {
        const error: NodeJS.ErrnoException = new Error(
          `Webhook target ${hostname} resolves to ${bad?.address ?? 'nothing'}, which is not allowed`,
        );
        error.code = REFUSED_TARGET;
        return callback(error, []);
      }
      if (options.all) return callback(null, list);
      const first = list[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}
