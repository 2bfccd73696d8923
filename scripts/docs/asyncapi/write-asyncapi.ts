import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { dump } from 'js-yaml';
import { format, resolveConfig } from 'prettier';
import { ASYNCAPI_FILE, asyncApiDocument, HEADER, ROOT } from './asyncapi-document';

/** `npm run docs:asyncapi`: writes docs/asyncapi.yaml as YAML formatted the way `npm run check` wants. */
async function writeAsyncApi(): Promise<void> {
  const yaml = dump(asyncApiDocument(), { lineWidth: -1, noRefs: true });
  const options = await resolveConfig(ASYNCAPI_FILE);
  writeFileSync(ASYNCAPI_FILE, await format(HEADER + yaml, { ...options, filepath: ASYNCAPI_FILE }));
  process.stdout.write(`wrote ${path.relative(ROOT, ASYNCAPI_FILE)}\n`);
}

void writeAsyncApi();
