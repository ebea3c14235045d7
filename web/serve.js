'use strict';
// A static file server for the playground, on the loopback interface only:
//   node web/serve.js [port]      (default 8765; 0 picks a free port)
// The page needs no server-side code; browsers only refuse to load a wasm module from file://.
const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = __dirname;
const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.png': 'image/png',
};

/** Starts the server; resolves to `{server, url}`. */
function serve(port = 0) {
  const server = http.createServer((request, response) => {
    const url = new URL(request.url, 'http://127.0.0.1');
    const relative = decodeURIComponent(url.pathname === '/' ? '/index.html' : url.pathname);
    const file = path.resolve(ROOT, `.${relative}`);
    // Only files inside web/ are served.
    if (!file.startsWith(ROOT + path.sep) || request.method !== 'GET') {
      response.writeHead(404).end();
      return;
    }
    fs.readFile(file, (error, body) => {
      if (error) {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
        return;
      }
      response.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' }).end(body);
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${server.address().port}/` }));
  });
}

module.exports = { serve };

if (require.main === module) {
  const port = Number(process.argv[2] ?? 8765);
  serve(port).then(({ url }) => console.log(`playground: ${url}`));
}
