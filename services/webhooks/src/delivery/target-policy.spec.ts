import {
  blockedAddressReason,
  ResolvedAddress,
  TargetBlockedError,
  TargetPolicy,
} from './target-policy';

describe('blockedAddressReason', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['0.0.0.0', 'this network'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['100.100.100.200', 'carrier-grade NAT'], // Alibaba Cloud metadata
    ['169.254.169.254', 'link-local'], // AWS, GCP, Azure metadata
    ['169.254.0.1', 'link-local'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['198.18.0.1', 'benchmarking'],
    ['192.0.2.1', 'documentation'],
    ['0.1.2.3', 'this network'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fc00::1', 'unique local'],
    ['fd00:ec2::254', 'unique local'], // AWS IPv6 metadata
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'IPv4-mapped 127.0.0.1'],
    ['::ffff:7f00:1', 'IPv4-mapped 127.0.0.1'],
    ['::ffff:169.254.169.254', 'IPv4-mapped 169.254.169.254'],
    ['::ffff:10.0.0.1', 'IPv4-mapped 10.0.0.1'],
    ['0:0:0:0:0:ffff:a9fe:a9fe', 'IPv4-mapped 169.254.169.254'],
    ['::7f00:1', 'IPv4-compatible 127.0.0.1'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 169.254.169.254'],
    ['2002:7f00:1::', '6to4 127.0.0.1'],
    ['2001:db8::1', 'documentation'],
    ['2001::1', 'Teredo'],
    ['64:ff9b:1::1', 'special-purpose'],
    ['fec0::1', 'site-local'],
  ])('refuses %s (%s)', (address, why) => {
    expect(blockedAddressReason(address)).toContain(why);
  });

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '169.255.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::',
  ])('allows public %s', (address) => {
    expect(blockedAddressReason(address)).toBeUndefined();
  });

  it('refuses what is not an IP address', () => {
    expect(blockedAddressReason('example.com')).toBe('not an IP address');
  });
});

describe('TargetPolicy', () => {
  const resolving = (table: Record<string, string[]>) =>
    new TargetPolicy(false, async (host): Promise<ResolvedAddress[]> => {
      const addresses = table[host];
      if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    });
  const policy = resolving({
    'hooks.example.com': ['93.184.216.34'],
    'internal.example.com': ['10.0.0.7'],
    'mixed.example.com': ['93.184.216.34', '127.0.0.1'],
    'v6.example.com': ['::ffff:169.254.169.254'],
  });

  it.each([
    ['https://hooks.example.com/x', undefined],
    ['http://hooks.example.com/x', 'must be an https URL'],
    ['ftp://hooks.example.com/x', 'must be an https URL'],
    ['not a url', 'must be an absolute URL'],
    ['https://user:pass@hooks.example.com/', 'must not contain credentials'],
    ['https://internal.example.com/', 'resolves to 10.0.0.7, a private address'],
    ['https://mixed.example.com/', 'resolves to 127.0.0.1, a loopback address'],
    ['https://v6.example.com/', 'IPv4-mapped 169.254.169.254'],
    ['https://127.0.0.1/', '127.0.0.1 is a loopback address'],
    ['https://2130706433/', '127.0.0.1 is a loopback address'], // the URL parser normalises it
    ['https://0x7f.1/', '127.0.0.1 is a loopback address'],
    ['https://[::1]/', '::1 is a loopback address'],
    ['https://[::ffff:127.0.0.1]/', 'IPv4-mapped 127.0.0.1'],
    ['https://169.254.169.254/latest/meta-data/', 'link-local'],
    ['https://100.64.1.1/', 'carrier-grade NAT'],
    ['https://localhost/', 'local or metadata name'],
    ['https://api.localhost/', 'local or metadata name'],
    ['https://metadata.google.internal/', 'local or metadata name'],
    ['https://nowhere.example.com/', 'could not be resolved'],
  ])('%s -> %s', async (url, problem) => {
    const found = await policy.problemWith(url);
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toContain(problem);
  });

  it('allows private targets and http when told to', async () => {
    const open = new TargetPolicy(true);
    expect(await open.problemWith('http://127.0.0.1:8080/hooks')).toBeUndefined();
    expect(await open.problemWith('http://localhost/hooks')).toBeUndefined();
    expect(() => open.checkLiteral('10.0.0.1')).not.toThrow();
  });

  it('lookup hands the socket exactly the checked addresses, and refuses a blocked one', async () => {
    const lookup = (host: string, all: boolean) =>
      new Promise<unknown>((resolve, reject) =>
        policy.lookup(host, { all }, (error, address, family) =>
          error ? reject(error) : resolve({ address, family }),
        ),
      );
    await expect(lookup('hooks.example.com', true)).resolves.toEqual({
      address: [{ address: '93.184.216.34', family: 4 }],
      family: undefined,
    });
    await expect(lookup('hooks.example.com', false)).resolves.toEqual({
      address: '93.184.216.34',
      family: 4,
    });
    await expect(lookup('mixed.example.com', true)).rejects.toBeInstanceOf(TargetBlockedError);
  });

  it('checks IP literals before connecting (no lookup happens for them)', () => {
    expect(() => policy.checkLiteral('[::1]')).toThrow(TargetBlockedError);
    expect(() => policy.checkLiteral('192.168.0.1')).toThrow('private');
    expect(() => policy.checkLiteral('93.184.216.34')).not.toThrow();
    expect(() => policy.checkLiteral('hooks.example.com')).not.toThrow();
  });
});
