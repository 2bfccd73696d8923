import { TestStack } from '@app/testing';

describe('smoke', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start();
  });
  afterAll(() => stack?.close());

  it('creates and reads a conversation through gateway, RabbitMQ and the conversations service', async () => {
    const { api } = await stack.createAccount();
    const created = await api.post('/v1/conversations', { subject: 'Hello' });
    expect(created.status).toBe(201);
    const read = await api.get(`/v1/rozmowy/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      id: created.body.id,
      status: 'aktywne',
      subject: 'Hello',
      messages: [],
    });
  });
});
