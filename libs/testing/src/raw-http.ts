import net from 'node:net';

/** A response read off the socket: status, headers (lower-case names, repeats kept) and body text. */
export interface RawResponse {
  status: number;
  headers: Record<string, string[]>;
  header(name: string): string | undefined;
  text: string;
  json(): any;
}

/**
 * Sends bytes exactly as given (a request no HTTP client would form: an absolute-form target, a
 * raw space in the URL, an unknown method, two Authorization headers) and reads one response.
 * The request should ask for `Connection: close` or be one the server closes after answering.
 */
export function rawHttp(baseUrl: string, request: string | Buffer, timeoutMs = 10_000): Promise<RawResponse> {
  return exchange(baseUrl, [request], timeoutMs, false);
}

/**
 * Sends a request in parts, pausing between them (a number is a pause in ms: a slow client, or
 * a body sent after its headers were read), and reads until the server closes the connection.
 * Rejects if it has not closed within `timeoutMs`.
 */
export function rawExchange(
  baseUrl: string,
  parts: Array<string | number>,
  timeoutMs = 10_000,
): Promise<RawResponse> {
  return exchange(baseUrl, parts, timeoutMs, true);
}

function exchange(
  baseUrl: string,
  parts: Array<string | Buffer | number>,
  timeoutMs: number,
  untilClosed: boolean,
): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(
          untilClosed
            ? `the server did not close the connection within ${timeoutMs} ms`
            : `no complete response within ${timeoutMs} ms`,
        ),
      );
    }, timeoutMs);
    const finish = () => {
      clearTimeout(timer);
      try {
        resolve(parseResponse(Buffer.concat(chunks)));
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    };
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      if (!untilClosed && isComplete(Buffer.concat(chunks))) {
        socket.destroy();
        finish();
      }
    });
    socket.on(untilClosed ? 'close' : 'end', finish);
    socket.on('error', (error) => {
      if (untilClosed) return; // a reset after the answer: 'close' follows
      clearTimeout(timer);
      if (chunks.length > 0) finish();
      else reject(error);
    });
    const send = async () => {
      for (const part of parts) {
        if (socket.destroyed) return;
        if (typeof part === 'number') await new Promise((done) => setTimeout(done, part));
        else socket.write(part);
      }
    };
    void send();
  });
}

function split(raw: Buffer): { head: string; body: Buffer } | undefined {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  return { head: raw.subarray(0, end).toString('latin1'), body: raw.subarray(end + 4) };
}

function isComplete(raw: Buffer): boolean {
  const parts = split(raw);
  const length = parts && /\r\ncontent-length:\s*(\d+)/i.exec(parts.head)?.[1];
  return parts !== undefined && length !== undefined && parts.body.length >= Number(length);
}

function parseResponse(raw: Buffer): RawResponse {
  const parts = split(raw);
  if (!parts) throw new Error(`not an HTTP response: ${raw.toString('latin1').slice(0, 200)}`);
  const [statusLine, ...lines] = parts.head.split('\r\n');
  const headers: Record<string, string[]> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    (headers[name] ??= []).push(line.slice(colon + 1).trim());
  }
  const text = parts.body.toString('utf8');
  return {
    status: Number(statusLine.split(' ')[1]),
    headers,
    header: (name) => headers[name.toLowerCase()]?.[0],
    text,
    json: () => JSON.parse(text),
  };
}
