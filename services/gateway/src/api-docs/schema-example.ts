type Schema = Record<string, unknown>;

const EXAMPLE_BY_FORMAT: Record<string, string> = {
  'date-time': '2026-03-02T09:15:27.412Z',
  uuid: '0b0c8f5e-4f6a-4c39-9a53-1c2f3e4d5a6b',
  email: 'ada@example.com',
};

/**
 * A whole example value of a schema, made of its fields' own examples (so that an operation's
 * example is as true as the schema it documents): the first of `examples`, else the first enum
 * value, else a value of the type; a nullable field shows its non-null form.
 */
export function exampleOf(schema: Schema): unknown {
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (Array.isArray(schema.oneOf)) return exampleOf((schema.oneOf as Schema[])[0]);
  if (Array.isArray(schema.anyOf) && schema.type === undefined) {
    const branch = (schema.anyOf as Schema[]).find((option) => option.type !== 'null') ?? {};
    return exampleOf(branch);
  }
  switch (schema.type) {
    case 'object':
      return Object.fromEntries(
        Object.entries((schema.properties ?? {}) as Record<string, Schema>).map(([name, property]) => [
          name,
          exampleOf(property),
        ]),
      );
    case 'array':
      return [exampleOf((schema.items ?? {}) as Schema)];
    case 'integer':
    case 'number':
      return schema.minimum ?? 0;
    case 'boolean':
      return true;
    case 'string':
      return EXAMPLE_BY_FORMAT[schema.format as string] ?? 'text';
    default:
      return null;
  }
}
