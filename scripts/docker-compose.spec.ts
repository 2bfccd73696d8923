import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CORE_SCHEMA, load, mergeTag } from 'js-yaml';
import { loadConfig, requireSecretsKeysInProduction, secretsSchema } from '@app/config';
import { ERROR_CATALOGUE, ErrorCode, problemType } from '@app/errors';

/**
 * The rules of docker-compose.yml, checked on the file itself in every `npm test` (no Docker
 * needed): what `docker compose up --scale gateway=2 --scale conversations=3 --scale webhooks=2`
 * needs (no fixed container names, no host ports on scaled services, one published entry point),
 * health checks everywhere and start-up ordered on them, the proxy's configuration. Compose
 * itself validates and runs the file in `npm run test:compose` (scripts/compose/test).
 */

const ROOT = path.resolve(__dirname, '..');
const APP_SERVICES = ['conversations', 'webhooks', 'gateway'];

interface ComposeService {
  image?: string;
  profiles?: string[];
  build?: unknown;
  container_name?: string;
  ports?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  stop_grace_period?: string;
  volumes?: string[];
}

const compose = load(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), {
  schema: CORE_SCHEMA.withTags(mergeTag),
}) as { services: Record<string, ComposeService> };
const services = Object.entries(compose.services);

describe('docker-compose.yml', () => {
  it('runs the backing services, the three services and a proxy; Prometheus only with the monitoring profile', () => {
    expect(Object.keys(compose.services).sort()).toEqual(
      ['postgres', 'redis', 'rabbitmq', 'proxy', 'prometheus', ...APP_SERVICES].sort(),
    );
    for (const [name, service] of services)
      expect({ name, profiles: service.profiles }).toEqual(
        name === 'prometheus' ? { name, profiles: ['monitoring'] } : { name },
      );
  });

  it('has Prometheus load the tested rules and scrape every replica of each service through Docker DNS', () => {
    expect(compose.services.prometheus.volumes).toContain('./deploy/prometheus:/etc/prometheus:ro');
    const config = load(readFileSync(path.join(ROOT, 'deploy/prometheus/prometheus.yml'), 'utf8')) as {
      rule_files: string[];
      scrape_configs: Array<{ job_name: string; dns_sd_configs: Array<{ names: string[]; port: number }> }>;
    };
    expect(config.rule_files).toEqual(['rules.yml']);
    const jobs = config.scrape_configs.map(({ job_name, dns_sd_configs }) => [
      job_name,
      dns_sd_configs.flatMap(({ names, port }) => names.map((name) => `${name}:${port}`)),
    ]);
    // Each service's health and metrics port, as the compose file sets it.
    const port = (name: string) =>
      compose.services[name].environment?.OPS_PORT ?? compose.services[name].environment?.PORT;
    expect(Object.fromEntries(jobs)).toEqual(
      Object.fromEntries(APP_SERVICES.map((name) => [name, [`${name}:${port(name)}`]])),
    );
  });

  it('gives every service a health check and starts each only once what it depends on is healthy', () => {
    for (const [name, service] of services) {
      expect({ name, healthcheck: Array.isArray(service.healthcheck?.test) }).toEqual({
        name,
        healthcheck: true,
      });
      for (const [dependency, { condition }] of Object.entries(service.depends_on ?? {})) {
        expect({ name, dependency, condition }).toEqual({ name, dependency, condition: 'service_healthy' });
        expect(compose.services[dependency]).toBeDefined();
      }
    }
    expect(Object.keys(compose.services.gateway.depends_on!).sort()).toEqual(
      ['conversations', 'postgres', 'rabbitmq', 'redis', 'webhooks'].sort(),
    );
    expect(Object.keys(compose.services.proxy.depends_on!)).toEqual(['gateway']);
  });

  it('can scale: no fixed container names, and only the proxy publishes the API port', () => {
    for (const [name, service] of services)
      expect({ name, container_name: service.container_name }).toEqual({ name });
    for (const name of APP_SERVICES) expect({ name, ports: compose.services[name].ports }).toEqual({ name });
    expect(compose.services.proxy.ports).toEqual(['3000:3000']);
  });

  it('runs the services from one image, each picked by SERVICE, with time to shut down gracefully', () => {
    for (const name of APP_SERVICES) {
      const service = compose.services[name];
      expect({ name, image: service.image, service: service.environment?.SERVICE }).toEqual({
        name,
        image: 'conversation-messaging-service:local',
        service: name,
      });
      expect(service.healthcheck?.test).toEqual(['CMD', 'node', 'dist/scripts/healthcheck.js']);
      // runService's deadline is 25 s; Docker's default of 10 s would kill in-flight work.
      expect(service.stop_grace_period).toBe('30s');
    }
    expect(compose.services.gateway.environment?.TRUST_PROXY).toBe('true');
  });

  it('gives the webhooks service (production mode) a valid key for signing secrets, overridable', () => {
    const { NODE_ENV, SECRETS_ENCRYPTION_KEYS } = compose.services.webhooks.environment!;
    const fallback = /^\$\{SECRETS_ENCRYPTION_KEYS:-(.+)\}$/.exec(SECRETS_ENCRYPTION_KEYS)?.[1];
    expect(fallback).toBeDefined();
    const config = requireSecretsKeysInProduction(
      loadConfig(secretsSchema, { NODE_ENV, SECRETS_ENCRYPTION_KEYS: fallback }),
    );
    expect(config.SECRETS_ENCRYPTION_KEYS).toHaveLength(1);
  });

  it('proxies to every gateway replica through Docker DNS, re-resolved at request time', () => {
    const [mount] = compose.services.proxy.volumes!;
    const [source, target] = mount.split(':');
    expect(target).toBe('/etc/nginx/conf.d/default.conf');
    const nginx = readFileSync(path.join(ROOT, source), 'utf8');
    expect(nginx).toMatch(/^resolver 127\.0\.0\.11 valid=\d+s/m);
    expect(nginx).toMatch(/set \$(\w+) gateway:3000;\s+proxy_pass http:\/\/\$\1;/);
    expect(nginx).toContain('proxy_set_header X-Forwarded-For $remote_addr;');
  });

  it("answers nginx's own errors as problem details of the error catalogue, with a request id", () => {
    const nginx = readFileSync(path.join(ROOT, 'deploy/nginx.conf'), 'utf8');
    const pages = [...nginx.matchAll(/location = (\/\.proxy-errors\/[a-z-]+) \{\n([\s\S]*?)\n {4}\}/g)];
    expect(pages.length).toBeGreaterThan(0);
    for (const [, uri, body] of pages) {
      expect({ uri, internal: /\binternal;/.test(body) }).toEqual({ uri, internal: true });
      expect(body).toContain('default_type application/problem+json;');
      expect(body).toContain('add_header X-Request-Id $request_id always;');
      const [, status, json] = /return (\d{3}) '(.*)';/.exec(body)!;
      const problem = JSON.parse(json);
      const entry = ERROR_CATALOGUE[problem.code as ErrorCode];
      expect({ uri, problem }).toEqual({
        uri,
        problem: {
          type: problemType(problem.code),
          title: entry?.title,
          status: Number(status),
          detail: expect.any(String),
          code: problem.code,
          request_id: '$request_id',
        },
      });
      expect(entry?.status).toBe(Number(status));
    }
    // Every error_page points at one of those pages, with the status it answers.
    for (const [, codes, status, uri] of nginx.matchAll(/error_page ([\d ]+) =(\d{3}) (\S+);/g)) {
      const page = pages.find(([, candidate]) => candidate === uri);
      expect({ codes, uri, answers: page && /return (\d{3})/.exec(page[2])![1] }).toEqual({
        codes,
        uri,
        answers: status,
      });
    }
  });
});
