import { z } from 'zod';

/** Thrown when the environment is invalid; its message names every bad variable. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Parses environment variables against a zod object schema whose keys are the variable names.
 * Every problem is collected, so one start-up attempt reports all of them.
 */
export function loadConfig<S extends z.ZodRawShape>(
  shape: S,
  env: NodeJS.ProcessEnv = process.env,
): z.infer<z.ZodObject<S>> {
  const input: Record<string, unknown> = {};
  for (const key of Object.keys(shape)) {
    const value = env[key];
    input[key] = value === '' ? undefined : value;
  }
  const parsed = z.object(shape).safeParse(input);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  }
  return parsed.data;
}

export const integer = (min: number, max: number, fallback: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

export const boolean = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0'])
    .default(fallback ? 'true' : 'false')
    .transform((v) => v === 'true' || v === '1');

function hasProtocol(value: string, protocols: string[]): boolean {
  try {
    return protocols.includes(new URL(value.trim()).protocol);
  } catch {
    return false;
  }
}

export const url = (protocols: string[], fallback: string) =>
  z
    .string()
    .default(fallback)
    .refine(
      (value) => hasProtocol(value, protocols),
      `must be a URL with protocol ${protocols.join(' or ')}`,
    );

/** One URL or several, comma-separated (the nodes of a cluster); kept as written. */
export const urlList = (protocols: string[], fallback: string) =>
  z
    .string()
    .default(fallback)
    .refine(
      (value) => value.split(',').every((item) => hasProtocol(item, protocols)),
      `must be URLs with protocol ${protocols.join(' or ')}, comma-separated`,
    );

/** `host:port` pairs, comma-separated (Redis Sentinels, say); empty by default. */
export const hostPortList = () =>
  z
    .string()
    .default('')
    .transform((text, context) =>
      text
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean)
        .map((item) => {
          const match = /^([^\s:]+):(\d{1,5})$/.exec(item);
          const port = Number(match?.[2]);
          if (!match || port < 1 || port > 65_535) {
            context.addIssue({ code: z.ZodIssueCode.custom, message: `"${item}" is not host:port` });
            return { host: '', port: 0 };
          }
          return { host: match[1], port };
        }),
    );
