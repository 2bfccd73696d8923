import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CONVERSATION_LIMITS, JSON_BODY_LIMITS, METADATA_LIMITS, SEARCH_LIMITS } from '@app/contracts';
import { gatewaySchema, rateLimitSchema } from '@app/config';
import { ERROR_CATALOGUE } from '@app/errors';
import { MAX_MESSAGES_PER_READ } from '../../services/conversations/src/conversations/conversations.repository';

/**
 * A limit is defined once, in libs/contracts or as a setting's default in libs/config; the error
 * help texts (and so docs/errors.md, which error-catalogue.spec.ts holds to them) and the docs
 * state it in words. Each phrase here must be found, and must state the defined number.
 */
const ROOT = path.resolve(__dirname, '../..');
const page = (name: string) => readFileSync(path.join(ROOT, name), 'utf8').replace(/\s+/g, ' ');
const help = (code: keyof typeof ERROR_CATALOGUE) => ERROR_CATALOGUE[code].help;
const byDefault = <T>(setting: { parse(value: undefined): T }) => setting.parse(undefined);

const KIB = 1024;

/** [where, the text, a pattern whose groups are numbers, the numbers it must state] */
const STATED: Array<[string, string, RegExp, number[]]> = [
  [
    'payload_too_large help',
    help('payload_too_large'),
    /limit \(([\d.]+) MiB by default\).*content is at most ([\d,]+) characters and metadata at most ([\d,]+) KiB/,
    [
      byDefault(gatewaySchema.BODY_LIMIT_BYTES) / KIB / KIB,
      CONVERSATION_LIMITS.messageContent,
      METADATA_LIMITS.bytes / KIB,
    ],
  ],
  [
    'rate_limited help',
    help('rate_limited'),
    /by default per hour: trial ([\d,]+), pro ([\d,]+), business ([\d,]+)/,
    [
      byDefault(rateLimitSchema.RATE_LIMIT_TRIAL),
      byDefault(rateLimitSchema.RATE_LIMIT_PRO),
      byDefault(rateLimitSchema.RATE_LIMIT_BUSINESS),
    ],
  ],
  [
    'conversation_too_large help',
    help('conversation_too_large'),
    /than one response carries \(([\d,]+)\)/,
    [MAX_MESSAGES_PER_READ],
  ],
  [
    'too_many_streams help',
    help('too_many_streams'),
    /`STREAMS_PER_ACCOUNT`, ([\d,]+) by default/,
    [byDefault(gatewaySchema.STREAMS_PER_ACCOUNT)],
  ],
  [
    'docs/api-conventions.md, "Text"',
    page('docs/api-conventions.md'),
    /message content 1\.\.([\d,]+) characters, subject ([\d,]+), visitor name ([\d,]+), email ([\d,]+), phone ([\d,]+), metadata a JSON object of at most ([\d,]+) KiB/,
    [
      CONVERSATION_LIMITS.messageContent,
      CONVERSATION_LIMITS.subject,
      CONVERSATION_LIMITS.visitorName,
      CONVERSATION_LIMITS.email,
      CONVERSATION_LIMITS.phone,
      METADATA_LIMITS.bytes / KIB,
    ],
  ],
  [
    'docs/api-conventions.md, "Hostile input"',
    page('docs/api-conventions.md'),
    /JSON bodies\*\* nest at most ([\d,]+) levels and hold at most ([\d,]+) elements.*`metadata` is an object of at most ([\d,]+) top-level keys, nested at most ([\d,]+) levels, at most ([\d,]+) KiB/,
    [
      JSON_BODY_LIMITS.depth,
      JSON_BODY_LIMITS.elements,
      METADATA_LIMITS.keys,
      METADATA_LIMITS.depth,
      METADATA_LIMITS.bytes / KIB,
    ],
  ],
  [
    'docs/conversations.md, "Search and tags"',
    page('docs/conversations.md'),
    /counts its matches exactly up to ([\d,]+) past the end of the page.*\(`offset \+ limit \+ ([\d,]+)`:.*oldest\) ([\d,]+) conversations in order.*stopping at ([\d,]+) matches past the page/,
    [SEARCH_LIMITS.countAhead, SEARCH_LIMITS.countAhead, SEARCH_LIMITS.walk, SEARCH_LIMITS.countAhead],
  ],
  [
    'docs/rate-limits.md',
    page('docs/rate-limits.md'),
    /`RATE_LIMIT_<PLAN>` requests \(by default trial ([\d,]+), pro ([\d,]+), business ([\d,]+)\)/,
    [
      byDefault(rateLimitSchema.RATE_LIMIT_TRIAL),
      byDefault(rateLimitSchema.RATE_LIMIT_PRO),
      byDefault(rateLimitSchema.RATE_LIMIT_BUSINESS),
    ],
  ],
];

/** The numbers a text states in the pattern's groups, or undefined when it does not say it. */
function stated(text: string, pattern: RegExp): number[] | undefined {
  return pattern
    .exec(text)
    ?.slice(1)
    .map((number) => Number(number.replace(/,/g, '')));
}

describe('limits stated in words', () => {
  it.each(STATED)('%s states the defined ones', (_where, text, pattern, defined) => {
    expect(stated(text, pattern)).toEqual(defined);
  });

  it('sees a number that is not the defined one, and a phrase that is gone', () => {
    const pattern = /content is at most ([\d,]+) characters/;
    expect(stated('content is at most 10,000 characters', pattern)).toEqual([10_000]);
    expect(stated('content is at most 5,000 characters', pattern)).not.toEqual([10_000]);
    expect(stated('content is short', pattern)).toBeUndefined();
  });
});
