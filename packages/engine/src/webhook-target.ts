import { lookup as dnsLookup } from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/** Address ranges a webhook may not reach unless allowed: loopback, private, link-local, … */
const FORBIDDEN: [string, number, 'ipv4' | 'ipv6'][] = [
  ['0.0.0.0', 8, 'ipv4'],
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['127.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'],
  ['224.0.0.0', 4, 'ipv4'],
  ['240.0.0.0', 4, 'ipv4'],
  ['::', 128, 'ipv6'],
  ['::1', 128, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
];

/**
 * Decides which webhook targets are allowed. Private and loopback addresses (and `localhost`) are
 * refused unless the allow-list (`LONGRUN_WEBHOOK_ALLOW`: hosts, IPs or CIDRs) names them. URLs
 * are checked when a task is submitted; hostnames are checked again on every delivery, after DNS
 * resolution and before any connection (so DNS rebinding cannot reach a private address).
 */
export class WebhookTargetPolicy {
  private readonly forbidden = new BlockList();
  private readonly allowed = new BlockList();
  private readonly allowedHosts = new Set<string>();

  /** @example new WebhookTargetPolicy(['127.0.0.1', '10.0.0.0/8', 'hooks.internal']) */
  constructor(allow: readonly string[] = []) {
    for (const [net, prefix, type] of FORBIDDEN) this.forbidden.addSubnet(net, prefix, type);
    for (const raw of allow.map((s) => s.trim().toLowerCase()).filter(Boolean)) {
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
    const host = parsed.hostname.replace(/^\[|\]$/g, '').toLowerCase();
    if (this.allowedHosts.has(host)) return null;
    if (isIP(host))
      return this.addressAllowed(host) ? null : 'targets a private or loopback address';
    if (host === 'localhost' || host.endsWith('.localhost')) return 'targets localhost';
    return null;
  }

  /** Whether a resolved address may be connected to. */
  addressAllowed(address: string): boolean {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
    const ip = mapped ?? address;
    const type = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
    if (this.allowed.check(ip, type)) return true;
    return !this.forbidden.check(ip, type);
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
      const trusted = this.allowedHosts.has(hostname.toLowerCase());
      const bad = trusted ? undefined : list.find((a) => !this.addressAllowed(a.address));
      if (bad || list.length === 0) {
        const error: NodeJS.ErrnoException = new Error(
          `Webhook target ${hostname} resolves to ${bad?.address ?? 'nothing'}, which is not allowed`,
        );
        error.code = 'EWEBHOOKTARGET';
        return callback(error, []);
      }
      if (options.all) return callback(null, list);
      const first = list[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}
