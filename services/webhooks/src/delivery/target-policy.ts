import dns from 'node:dns';
import net from 'node:net';

/**
 * Where webhooks may go (DESIGN.md, Pitfalls: SSRF). A subscription may not make this service
 * call into its own network: loopback, private, link-local, carrier-grade NAT, cloud metadata and
 * the other special-purpose ranges are refused, in IPv4 and IPv6, including IPv6 forms that embed
 * an IPv4 address (mapped, compatible, NAT64, 6to4). The check runs when a subscription is
 * created or changed and again on every connection, against the addresses the connection then
 * uses (see WebhookSender), so DNS rebinding between the two gains nothing.
 */

/** [first address, prefix length, why] */
const IPV4_BLOCKED: Array<[string, number, string]> = [
  ['0.0.0.0', 8, 'a "this network" address'],
  ['10.0.0.0', 8, 'a private address'],
  ['100.64.0.0', 10, 'a carrier-grade NAT address'],
  ['127.0.0.0', 8, 'a loopback address'],
  ['169.254.0.0', 16, 'a link-local (cloud metadata) address'],
  ['172.16.0.0', 12, 'a private address'],
  ['192.0.0.0', 24, 'an IETF protocol address'],
  ['192.0.2.0', 24, 'a documentation address'],
  ['192.88.99.0', 24, 'a 6to4 relay address'],
  ['192.168.0.0', 16, 'a private address'],
  ['198.18.0.0', 15, 'a benchmarking address'],
  ['198.51.100.0', 24, 'a documentation address'],
  ['203.0.113.0', 24, 'a documentation address'],
  ['224.0.0.0', 4, 'a multicast address'],
  ['240.0.0.0', 4, 'a reserved address'],
];

/** [prefix as 8 hextets, prefix length in bits, why]; IPv4-embedding prefixes are handled apart. */
const IPV6_BLOCKED: Array<[number[], number, string]> = [
  [[0, 0, 0, 0, 0, 0, 0, 0], 128, 'the unspecified address'],
  [[0, 0, 0, 0, 0, 0, 0, 1], 128, 'a loopback address'],
  [[0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48, 'a local-use NAT64 address'],
  [[0x100, 0, 0, 0, 0, 0, 0, 0], 64, 'a discard-only address'],
  [[0x2001, 0, 0, 0, 0, 0, 0, 0], 32, 'a Teredo address'],
  [[0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32, 'a documentation address'],
  [[0xfc00, 0, 0, 0, 0, 0, 0, 0], 7, 'a private (unique local) address'],
  [[0xfe80, 0, 0, 0, 0, 0, 0, 0], 10, 'a link-local address'],
  [[0xfec0, 0, 0, 0, 0, 0, 0, 0], 10, 'a site-local address'],
  [[0xff00, 0, 0, 0, 0, 0, 0, 0], 8, 'a multicast address'],
];

/** Names that mean "this machine" or a cloud's metadata service wherever they are resolved. */
const BLOCKED_NAMES = [
  /^localhost$/,
  /\.localhost$/,
  /^metadata\.google\.internal$/,
  /^metadata$/,
  /^instance-data$/,
];

function ipv4ToNumber(address: string): number {
  return address.split('.').reduce((value, octet) => value * 256 + Number(octet), 0);
}

function blockedIpv4(address: string): string | undefined {
  const value = ipv4ToNumber(address);
  for (const [first, bits, why] of IPV4_BLOCKED) {
    const size = 2 ** (32 - bits);
    const start = ipv4ToNumber(first);
    if (value >= start && value < start + size) return why;
  }
  return undefined;
}

/** Eight 16-bit groups of an IPv6 address (a trailing dotted quad and a zone id are understood). */
export function ipv6Hextets(address: string): number[] {
  let text = address.split('%')[0].toLowerCase();
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (quad) {
    const v = ipv4ToNumber(quad[1]);
    text = `${text.slice(0, -quad[1].length)}${(v >>> 16).toString(16)}:${(v & 0xffff).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const parse = (part: string | undefined) => (part ? part.split(':').map((h) => parseInt(h, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  const zeros = tail === undefined ? [] : new Array(8 - left.length - right.length).fill(0);
  return [...left, ...zeros, ...right];
}

function inPrefix(hextets: number[], prefix: number[], bits: number): boolean {
  for (let i = 0; i < 8 && bits > 0; i++, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    if ((hextets[i] & mask) !== (prefix[i] & mask)) return false;
  }
  return true;
}

const toIpv4 = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;

function blockedIpv6(address: string): string | undefined {
  const h = ipv6Hextets(address);
  const embedded = (v4: string, form: string) => {
    const why = blockedIpv4(v4);
    return why && `${why} (${form} ${v4})`;
  };
  // ::ffff:a.b.c.d (IPv4-mapped) and ::a.b.c.d (IPv4-compatible, deprecated)
  if (inPrefix(h, [0, 0, 0, 0, 0, 0xffff, 0, 0], 96))
    return embedded(toIpv4(h[6], h[7]), 'IPv4-mapped') ?? undefined;
  if (inPrefix(h, [0, 0, 0, 0, 0, 0, 0, 0], 96) && !(h[6] === 0 && h[7] <= 1))
    return embedded(toIpv4(h[6], h[7]), 'IPv4-compatible');
  // 64:ff9b::a.b.c.d (NAT64 well-known prefix) and 2002:aabb:ccdd:: (6to4)
  if (inPrefix(h, [0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96)) return embedded(toIpv4(h[6], h[7]), 'NAT64');
  if (inPrefix(h, [0x2002, 0, 0, 0, 0, 0, 0, 0], 16)) return embedded(toIpv4(h[1], h[2]), '6to4');
  for (const [prefix, bits, why] of IPV6_BLOCKED) if (inPrefix(h, prefix, bits)) return why;
  return undefined;
}

/** Why an IP address may not be a webhook target, or undefined if it may. */
export function blockedAddressReason(address: string): string | undefined {
  const family = net.isIP(address.split('%')[0]);
  if (family === 4) return blockedIpv4(address);
  if (family === 6) return blockedIpv6(address);
  return 'not an IP address';
}

export class TargetBlockedError extends Error {
  readonly code = 'ERR_WEBHOOK_TARGET_BLOCKED';
}

export interface ResolvedAddress {
  address: string;
  family: number;
}

export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = (hostname) =>
  dns.promises.lookup(hostname, { all: true, verbatim: true });

/** The host of a URL as net.connect wants it: IPv6 literals without their brackets. */
export const bareHost = (hostname: string) => hostname.replace(/^\[(.*)\]$/, '$1');

export class TargetPolicy {
  constructor(
    readonly allowPrivate: boolean,
    private readonly resolve: Resolver = systemResolver,
  ) {}

  /**
   * Checks a subscription URL as given by a client: its form (https, or http when private targets
   * are allowed; no credentials) and, unless private targets are allowed, every address its host
   * resolves to. Returns the problem in words, or undefined if the URL is acceptable.
   */
  async problemWith(text: string): Promise<string | undefined> {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      return 'must be an absolute URL';
    }
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && this.allowPrivate)) {
      return this.allowPrivate ? 'must be an http or https URL' : 'must be an https URL';
    }
    if (url.username || url.password)
      return 'must not contain credentials (the signature authenticates deliveries)';
    if (url.hash) return 'must not contain a fragment';
    if (this.allowPrivate) return undefined;
    try {
      await this.addressesFor(url.hostname);
      return undefined;
    } catch (error) {
      return error instanceof TargetBlockedError
        ? error.message
        : `host ${url.hostname} could not be resolved`;
    }
  }

  /**
   * Every address of a host, each checked; a blocked one fails the whole host (a name that
   * resolves to one public and one private address is refused). IP literals are checked as they
   * are, without DNS.
   */
  async addressesFor(hostname: string): Promise<ResolvedAddress[]> {
    const host = bareHost(hostname).toLowerCase();
    const family = net.isIP(host);
    const addresses = family ? [{ address: host, family }] : await this.lookupName(host);
    if (this.allowPrivate) return addresses;
    for (const { address } of addresses) {
      const why = blockedAddressReason(address);
      if (why) {
        throw new TargetBlockedError(
          family ? `${address} is ${why}` : `host ${host} resolves to ${address}, ${why}`,
        );
      }
    }
    return addresses;
  }

  /** Throws if the host is an IP literal that may not be targeted; names are checked in `lookup`. */
  checkLiteral(hostname: string): void {
    const host = bareHost(hostname);
    if (this.allowPrivate || !net.isIP(host)) return;
    const why = blockedAddressReason(host);
    if (why) throw new TargetBlockedError(`${host} is ${why}`);
  }

  private async lookupName(host: string): Promise<ResolvedAddress[]> {
    if (!this.allowPrivate && BLOCKED_NAMES.some((pattern) => pattern.test(host.replace(/\.$/, '')))) {
      throw new TargetBlockedError(`host ${host} is a local or metadata name`);
    }
    const addresses = await this.resolve(host);
    if (addresses.length === 0) throw new Error(`no addresses for ${host}`);
    return addresses;
  }

  /**
   * A `lookup` for net.connect/tls.connect (undici's `connect.lookup`): resolves once, checks
   * every address and hands the socket exactly those addresses, so the connection goes to an
   * address that was checked and no second resolution can swap it.
   */
  readonly lookup = (
    hostname: string,
    options: { all?: boolean } | number | undefined,
    callback: (error: Error | null, address: string | ResolvedAddress[], family?: number) => void,
  ): void => {
    const all = typeof options === 'object' && options !== null && options.all === true;
    this.addressesFor(hostname).then(
      (addresses) => {
        if (all) callback(null, addresses);
        else callback(null, addresses[0].address, addresses[0].family);
      },
      (error: Error) => callback(error, all ? [] : '', undefined),
    );
  };
}
