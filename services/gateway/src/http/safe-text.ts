import { isEmail, registerDecorator, ValidationOptions } from 'class-validator';
import { isStorableJson, isStorableText } from '@app/contracts';

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
