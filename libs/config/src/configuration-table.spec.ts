import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import * as schemas from './config-schemas';
import { loadConfig } from './load-config';

/**
 * The configuration table of docs/operations.md and the schemas cannot drift: every variable of every schema
 * is documented, with the default the schema really applies and the services that read it.
 */

const SERVICES: Record<string, z.ZodRawShape> = {
  gateway: schemas.gatewaySchema,
  conversations: schemas.conversationsSchema,
  webhooks: schemas.webhooksSchema,
};

interface DocumentedVariable {
  name: string;
  /** The default as written, per service when the cell says so (`3101` (conversations), …). */
  defaultFor: (service?: string) => string;
  usedBy: string[];
}

function parseDefault(cell: string): DocumentedVariable['defaultFor'] {
  const perService = [...cell.matchAll(/`([^`]*)` \((\w+)\)/g)];
  if (perService.length === 0) return () => cell.replace(/^`|`$/g, '');
  const byService = new Map(perService.map(([, value, service]) => [service, value]));
  return (service) => byService.get(service ?? '') ?? `(no default documented for ${service})`;
}

function readmeTable(): DocumentedVariable[] {
  const readme = readFileSync(path.resolve(__dirname, '../../../docs/operations.md'), 'utf8');
  const section = readme.split(/^## Configuration$/m)[1]?.split(/^## /m)[0];
  if (!section) throw new Error('docs/operations.md has no "## Configuration" section');
  return section
    .split('\n')
    .filter((line) => /^\| `[A-Z0-9_]+` +\|/.test(line))
    .map((line) => {
      const [name, defaultCell, usedBy] = line
        .split('|')
        .slice(1, 4)
        .map((cell) => cell.trim());
      return {
        name: name.replace(/`/g, ''),
        defaultFor: parseDefault(defaultCell),
        usedBy: usedBy === 'all' ? Object.keys(SERVICES) : usedBy.split(/,\s*/),
      };
    });
}

/** Every variable of every schema: the services' and the exported ones they are made of. */
function schemaVariables(): Map<string, z.ZodTypeAny> {
  const variables = new Map<string, z.ZodTypeAny>();
  const shapes = [
    ...Object.values(SERVICES),
    ...Object.values(schemas).filter((value) => typeof value === 'object'),
  ];
  for (const shape of shapes) {
    for (const [name, type] of Object.entries(shape)) variables.set(name, type);
  }
  return variables;
}

/** The default a schema applies, and what the same schema makes of the documented text. */
function defaults(type: z.ZodTypeAny, name: string, documented: string) {
  const shape = { [name]: type };
  const applied: unknown = loadConfig(shape, {})[name];
  const asDocumented: unknown =
    documented === '—' ? undefined : loadConfig(shape, { [name]: documented })[name];
  return { applied, asDocumented };
}

describe('configuration table (docs/operations.md)', () => {
  const documented = readmeTable();
  const variables = schemaVariables();

  it('lists every variable of every schema once, and nothing else', () => {
    const names = documented.map((row) => row.name);
    expect(new Set(names).size).toBe(names.length);
    expect([...names].sort()).toEqual([...variables.keys()].sort());
  });

  it.each(documented.map((row) => [row.name, row] as const))(
    '%s: the documented default is the one applied',
    (name, row) => {
      const users = Object.entries(SERVICES).filter(([, shape]) => name in shape);
      const checks: [string | undefined, z.ZodTypeAny][] = users.length
        ? users.map(([service, shape]) => [service, shape[name]])
        : [[undefined, variables.get(name)!]];
      for (const [service, type] of checks) {
        const { applied, asDocumented } = defaults(type, name, row.defaultFor(service));
        expect({ service, default: asDocumented }).toEqual({ service, default: applied });
      }
    },
  );

  it.each(documented.map((row) => [row.name, row] as const))(
    '%s: "used by" names the services whose schema has it',
    (name, row) => {
      const users = Object.entries(SERVICES)
        .filter(([, shape]) => name in shape)
        .map(([service]) => service);
      if (users.length === 0) return; // a schema of its own (e.g. the CLI's): documented, not per service
      expect(row.usedBy.sort()).toEqual(users.sort());
    },
  );
});
