// Reference echo server for the conformance cases, on Node's `ws` package.
// Same routes and limits as Mustang's test listener:
//   /ws          echo, max payload 1 MiB
//   /ws/small    echo, max payload 64 KiB
//   /ws/big      echo, max payload 32 MiB
//   /ws/deflate  echo with permessage-deflate, max payload 1 MiB
// Usage: node node_echo_server.js PORT (0 picks one); prints "listening PORT".
// NODE_PATH must lead to the ws package (_tools/node/node_modules).
'use strict';
const http = require('http');
const { WebSocketServer } = require('ws');

const routes = {
  '/ws': { maxPayload: 1 << 20, perMessageDeflate: false },
  '/ws/small': { maxPayload: 65536, perMessageDeflate: false },
  '/ws/big': { maxPayload: 32 << 20, perMessageDeflate: false },
  '/ws/deflate': { maxPayload: 1 << 20, perMessageDeflate: { threshold: 0 } },
};
const servers = {};
for (const [path, opts] of Object.entries(routes)) {
  const wss = new WebSocketServer({ noServer: true, ...opts });
  wss.on('connection', (ws) => {
    ws.on('error', () => {});
    ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
  });
  servers[path] = wss;
}
const server = http.createServer((req, res) => {
  res.writeHead(404);
  res.end();
});
server.on('upgrade', (req, socket, head) => {
  const wss = servers[new URL(req.url, 'http://x').pathname];
  if (!wss) {
    socket.destroy();
    return;
  }
  wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
});
server.listen(Number(process.argv[2] || 0), '127.0.0.1', () => {
  console.log('listening ' + server.address().port);
});
