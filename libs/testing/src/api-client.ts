import { OpenApiContract } from './openapi-contract';

/** A response as a test sees it: status, headers and the parsed JSON body (or raw text). */
export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** A response and how long it took to come. */
export interface Timed<T = any> extends ApiResponse<T> {
  elapsedMs: number;
}

export async function timed<T>(request: Promise<ApiResponse<T>>): Promise<Timed<T>> {
  const startedAt = performance.now();
  const response = await request;
  return { ...response, elapsedMs: performance.now() - startedAt };
}

export interface RequestOptions {
  apiKey?: string | null;
  body?: unknown;
  /** Sent verbatim instead of JSON-encoding `body`. */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  /**
   * `false` skips the check against the OpenAPI document, for requests that deliberately go
   * outside it (an undocumented method or path, a malformed URL).
   */
  contract?: boolean;
}

/**
 * Real HTTP against a gateway; `fetch` percent-encodes non-ASCII path segments as clients do.
 * Every response from the public API is checked against the gateway's own OpenAPI document
 * (status documented for the operation, body matching its schema): a mismatch fails the test.
 */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly apiKey?: string,
  ) {}

  withKey(apiKey: string): ApiClient {
    return new ApiClient(this.baseUrl, apiKey);
  }

  get<T = any>(path: string, options: RequestOptions = {}) {
    return this.request<T>('GET', path, options);
  }
  post<T = any>(path: string, body?: unknown, options: RequestOptions = {}) {
    return this.request<T>('POST', path, { ...options, body });
  }
  patch<T = any>(path: string, body?: unknown, options: RequestOptions = {}) {
    return this.request<T>('PATCH', path, { ...options, body });
  }

  async request<T = any>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    const key = options.apiKey === undefined ? this.apiKey : options.apiKey;
    if (key) headers.authorization ??= `Bearer ${key}`;
    let payload: string | Buffer | undefined = options.rawBody;
    if (payload === undefined && options.body !== undefined) {
      payload = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const url = new URL(path, this.baseUrl);
    const response = await fetch(url, { method, headers, body: payload });
    const text = isEventStream(response) ? await firstFrame(response) : await response.text();
    let body: any = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    const result = { status: response.status, headers: response.headers, body, text };
    if (options.contract !== false && OpenApiContract.covers(url)) {
      const mismatches = (await OpenApiContract.for(this.baseUrl)).mismatches(method, url, result);
      if (mismatches.length > 0) {
        throw new Error(
          `Response differs from the OpenAPI document:\n  ${mismatches.join('\n  ')}\nbody: ${text.slice(0, 500)}`,
        );
      }
    }
    return result;
  }
}

const isEventStream = (response: Response) =>
  (response.headers.get('content-type') ?? '').startsWith('text/event-stream');

/** A Server-Sent Events response never ends: its first frame is read, then the stream is closed. */
async function firstFrame(response: Response): Promise<string> {
  const reader = response.body!.getReader();
  let text = '';
  while (!text.includes('\n\n')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += Buffer.from(value).toString('utf8');
  }
  await reader.cancel();
  return text;
}
