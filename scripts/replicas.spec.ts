import { parseReplicaCounts, planReplicas } from './replicas';

describe('replica counts (npm start / npm run start:cluster)', () => {
  it('runs each service once unless told otherwise', () => {
    expect(parseReplicaCounts([])).toEqual({ conversations: 1, webhooks: 1, gateway: 1 });
    expect(parseReplicaCounts(['--gateway', '2', '--webhooks=3'])).toEqual({
      conversations: 1,
      webhooks: 3,
      gateway: 2,
    });
  });

  it('lets a count given later win (npm run start:cluster -- --gateway 3)', () => {
    expect(parseReplicaCounts(['--gateway', '2', '--conversations', '2', '--gateway', '3'])).toMatchObject({
      gateway: 3,
      conversations: 2,
    });
  });

  it.each([
    ['--gateway', '0'],
    ['--gateway', '-1'],
    ['--webhooks', 'two'],
    ['--conversations', '1.5'],
    ['--gateway', '33'],
  ])('rejects %s %s', (flag, value) => {
    expect(() => parseReplicaCounts([`${flag}=${value}`])).toThrow(
      `${flag} must be a whole number from 1 to 32`,
    );
  });

  it('rejects unknown options', () => {
    expect(() => parseReplicaCounts(['--gateways', '2'])).toThrow(/Unknown option '--gateways'/);
  });
});

describe('replica plan', () => {
  const counts = { conversations: 2, webhooks: 2, gateway: 2 };

  it('gives every replica its own port: gateway from PORT (3000), ops servers from 3101 and 3201', () => {
    expect(planReplicas(counts, {}).map(({ name, env }) => [name, env])).toEqual([
      ['conversations#0', { OPS_PORT: '3101' }],
      ['conversations#1', { OPS_PORT: '3102' }],
      ['webhooks#0', { OPS_PORT: '3201' }],
      ['webhooks#1', { OPS_PORT: '3202' }],
      ['gateway#0', { PORT: '3000' }],
      ['gateway#1', { PORT: '3001' }],
    ]);
    expect(
      planReplicas(counts, { PORT: '8080' })
        .filter((r) => r.service === 'gateway')
        .map((r) => r.env.PORT),
    ).toEqual(['8080', '8081']);
  });

  it('lets the system choose every port with PORT=0 and OPS_PORT=0', () => {
    const ports = planReplicas(counts, { PORT: '0', OPS_PORT: '0' }).map((r) => r.env.PORT ?? r.env.OPS_PORT);
    expect(ports).toEqual(['0', '0', '0', '0', '0', '0']);
  });
});
