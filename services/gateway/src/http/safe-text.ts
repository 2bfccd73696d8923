import { isEmail, registerDecorator, ValidationOptions } from 'class-validator';

/**
 * Postgres cannot store U+0000 in text or jsonb, and rejects unpaired UTF-16 surrogates in jsonb.
 * Such input is refused with a 400 at the edge instead of failing deep inside a service.
 */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function isStorableText(value: string): boolean {
  return !UNSTORABLE.test(value);
}

/** True when every string (keys included) anywhere inside a JSON value is storable. */
export function isStorableJson(value: unknown): boolean {
  if (typeof value === 'string') return isStorableText(value);
  if (Array.isArray(value)) return value.every(isStorableJson);
  if (value && typeof value === 'object') {
    return Object.entries(value).every(([key, nested]) => isStorableText(key) && isStorableJson(nested));
  }
  return true;
}

export function StorableText(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'storableText',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: '$property must not contain NUL characters or unpaired surrogates', ...options },
      validator: { validate: (value: unknown) => typeof value !== 'string' || isStorableText(value) },
    });
}

export const METADATA_MAX_BYTES = 16 * 1024;

/** metadata: a JSON object of at most 16 KiB whose strings are all storable. */
export function MetadataObject(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'metadataObject',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: `$property must be a JSON object of at most ${METADATA_MAX_BYTES} bytes without NUL characters`,
        ...options,
      },
      validator: {
        validate: (value: unknown) =>
          value !== null &&
          typeof value === 'object' &&
          !Array.isArray(value) &&
          Buffer.byteLength(JSON.stringify(value)) <= METADATA_MAX_BYTES &&
          isStorableJson(value),
      },
    });
}

/**
 * An email address. validator.js's isEmail throws (URIError) on unpaired surrogates instead of
 * answering false, so storability is checked first.
 */
export function ContactEmail(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'contactEmail',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: '$property must be a valid email address', ...options },
      validator: {
        validate: (value: unknown) => typeof value === 'string' && isStorableText(value) && isEmail(value),
      },
    });
}
