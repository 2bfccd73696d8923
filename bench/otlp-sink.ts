import http from 'node:http';

/**
 * An OTLP/HTTP (protobuf) collector that keeps nothing, for `npm run bench:tracing`: it reads each export,
 * answers 200 and counts the bytes, so the services pay the whole cost of exporting and the sink
 * (a collector elsewhere in production) is not among the processes whose CPU is measured.
 * Usage: node dist/bench/otlp-sink.js PORT; on SIGTERM it prints what it received.
 */
const port = Number(process.argv[2] ?? 4319);
let requests = 0;
let bytes = 0;
const server = http.createServer((request, response) => {
  request.on('data', (chunk: Buffer) => (bytes += chunk.length));
  request.on('end', () => {
    requests++;
    // An empty ExportTraceServiceResponse: nothing rejected.
    response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  });
});
server.listen(port, '127.0.0.1');
process.once('SIGTERM', () => {
  process.stderr.write(`otlp-sink: ${requests} exports, ${(bytes / 1e6).toFixed(1)} MB\n`);
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
