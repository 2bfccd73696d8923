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

/** A URL that may be left unset (empty: unset). */
export const optionalUrl = (protocols: string[]) =>
  z
    .string()
    .optional()
    .refine(
      (value) => value === undefined || hasProtocol(value, protocols),
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

/** One key of a keyring: its id (stored beside each ciphertext) and its 32 bytes. */
export interface EncryptionKey {
  id: string;
  key: Buffer;
}

const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * `id:base64` entries, comma-separated: each id 1-32 of `A-Za-z0-9_-`, unique, each key 32 bytes
 * (AES-256). The first encrypts; all decrypt. Empty by default. The problem names the entry by its
 * position and id, never the key.
 */
export const encryptionKeys = () =>
  z
    .string()
    .default('')
    .transform((text, context): EncryptionKey[] => {
      const entries = text
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);
      const keys = entries.map((entry, index) => {
        const [id, encoded, ...rest] = entry.split(':');
        const key = Buffer.from(encoded ?? '', 'base64');
        const problem =
          rest.length > 0 || encoded === undefined
            ? 'is not id:base64'
            : !KEY_ID.test(id)
              ? 'has an id that is not 1-32 characters of A-Z a-z 0-9 _ -'
              : !BASE64.test(encoded) || key.length !== 32
                ? `has a key that is not 32 bytes in base64 (openssl rand -base64 32)`
                : undefined;
        if (problem)
          context.addIssue({ code: z.ZodIssueCode.custom, message: `entry ${index + 1} ${problem}` });
        return { id, key };
      });
      const ids = keys.map((key) => key.id);
      const repeated = ids.find((id, index) => ids.indexOf(id) !== index);
      if (repeated !== undefined)
        context.addIssue({ code: z.ZodIssueCode.custom, message: `key id "${repeated}" is given twice` });
      return keys;
    });
