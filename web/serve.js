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
  '.svg': 'image/svg+xml',
};

/** The file under ROOT a request path names, or `null` when it names none (a malformed
 *  percent-encoding, a NUL byte, a path outside web/). Never throws: any page a visitor
 *  opens may send such a request, and it must not stop the server. */
function fileOf(pathname) {
  let relative;
  try {
    relative = decodeURIComponent(pathname === '/' ? '/index.html' : pathname);
  } catch {
    return null;
  }
  // Browsers ask for /favicon.ico whatever the page links; the page's icon answers both.
  if (relative === '/favicon.ico') relative = '/favicon.svg';
  if (relative.includes('\0')) return null;
  const file = path.resolve(ROOT, `.${relative}`);
  // Only files inside web/ are served.
  return file.startsWith(ROOT + path.sep) ? file : null;
}

/** Starts the server; resolves to `{server, url}`. */
function serve(port = 0) {
  const server = http.createServer((request, response) => {
    let file = null;
    try {
      file = fileOf(new URL(request.url, 'http://127.0.0.1').pathname);
    } catch {
      file = null;
    }
    if (file === null || request.method !== 'GET') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
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

module.exports = { serve, fileOf };

if (require.main === module) {
  const port = Number(process.argv[2] ?? 8765);
  serve(port).then(({ url }) => console.log(`playground: ${url}`));
}
