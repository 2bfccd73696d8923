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
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete response within ${timeoutMs} ms`));
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
      if (isComplete(Buffer.concat(chunks))) {
        socket.destroy();
        finish();
      }
    });
    socket.on('end', finish);
    socket.on('error', (error) => {
      clearTimeout(timer);
      if (chunks.length > 0) finish();
      else reject(error);
    });
    socket.write(request);
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
