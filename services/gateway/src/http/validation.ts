import { ValidationError, ValidationPipe } from '@nestjs/common';
import { DomainError, FieldError } from '@app/errors';

function flatten(errors: ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

/** DTO validation for request bodies; unknown fields are refused, every problem is listed. */
export function bodyValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => DomainError.validation(flatten(errors)),
  });
}
