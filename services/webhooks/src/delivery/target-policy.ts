import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Where webhooks may go (docs/webhooks.md, "Safety"). A subscription may not make this service
 * call into its own network: loopback, private, link-local, carrier-grade NAT, cloud metadata and
 * the other special-purpose ranges (ipaddr.js's) are refused, in IPv4 and IPv6, including IPv6
 * forms that embed an IPv4 address (mapped, compatible, NAT64, 6to4). The check runs when a subscription is
 * created or changed and again on every connection, against the addresses the connection then
 * uses (see WebhookSender), so DNS rebinding between the two gains nothing.
 */

/** Why each special-purpose range of ipaddr.js may not be targeted; only `unicast` may. */
const RANGE_REASONS: Record<string, string> = {
  unspecified: 'a "this network" (unspecified) address',
  broadcast: 'a broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local (cloud metadata) address',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT address',
  private: 'a private address',
  reserved: 'a reserved (documentation, benchmarking or protocol) address',
  uniqueLocal: 'a private (unique local) address',
  deprecatedSiteLocal: 'a site-local address',
  teredo: 'a Teredo address',
  discard: 'a discard-only address',
};

/** Names that mean "this machine" or a cloud's metadata service wherever they are resolved. */
const BLOCKED_NAMES = [
  /^localhost$/,
  /\.localhost$/,
  /^metadata\.google\.internal$/,
  /^metadata$/,
  /^instance-data$/,
];

/**
 * IPv6 prefixes whose addresses carry an IPv4 one, with the byte offset of the embedded address:
 * the NAT64 well-known prefix (RFC 6052), 6to4 (RFC 3056) and the deprecated IPv4-compatible form
 * (RFC 4291; `::` and `::1` themselves are the unspecified and loopback addresses, not IPv4 ones).
 */
const EMBEDDING_PREFIXES: Array<{ form: string; prefix: [ipaddr.IPv6, number]; offset: number }> = [
  { form: 'NAT64', prefix: ipaddr.IPv6.parseCIDR('64:ff9b::/96'), offset: 12 },
  { form: '6to4', prefix: ipaddr.IPv6.parseCIDR('2002::/16'), offset: 2 },
  { form: 'IPv4-compatible', prefix: ipaddr.IPv6.parseCIDR('::/96'), offset: 12 },
];

/**
 * The IPv4 address an IPv6 one carries and in which form: mapped (::ffff:a.b.c.d) or one of
 * EMBEDDING_PREFIXES. Such an address reaches that IPv4 host, so it is judged as that host.
 */
function embeddedIpv4(address: ipaddr.IPv6): { ipv4: string; form: string } | undefined {
  if (address.isIPv4MappedAddress()) return { ipv4: address.toIPv4Address().toString(), form: 'IPv4-mapped' };
  const range = address.range();
  if (range === 'unspecified' || range === 'loopback') return undefined;
  const embedding = EMBEDDING_PREFIXES.find(({ prefix }) => address.match(prefix));
  if (!embedding) return undefined;
  const bytes = address.toByteArray().slice(embedding.offset, embedding.offset + 4);
  return { ipv4: ipaddr.fromByteArray(bytes).toString(), form: embedding.form };
}

/** Why an IP address may not be a webhook target, or undefined if it may (a global unicast address). */
export function blockedAddressReason(address: string): string | undefined {
  const text = address.split('%')[0];
  if (!net.isIP(text)) return 'not an IP address';
  const parsed = ipaddr.parse(text);
  const embedded = parsed.kind() === 'ipv6' ? embeddedIpv4(parsed as ipaddr.IPv6) : undefined;
  if (embedded) {
    const why = blockedAddressReason(embedded.ipv4);
    return why && `${why} (${embedded.form} ${embedded.ipv4})`;
  }
  const range = parsed.range();
  return range === 'unicast' ? undefined : (RANGE_REASONS[range] ?? `a special-purpose address (${range})`);
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
    // No connection can go to port 0 (the URL parser takes 0 to 65535).
    if (url.port === '0') return 'must name a port from 1 to 65535, or none';
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
