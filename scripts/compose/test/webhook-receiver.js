// A webhook subscriber for the compose tests, run by node in a container on the project's network
// (`receiver:8080`): answers every request 200 and writes it to stdout as one JSON line, which the
// test reads with `docker logs`.
const http = require('node:http');

http
  .createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const record = {
        path: request.url,
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      process.stdout.write(`${JSON.stringify(record)}\n`);
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('ok');
    });
  })
  .listen(8080, () => process.stdout.write('{"listening":8080}\n'));
process.on('SIGTERM', () => process.exit(0));
