// Node `ws` echo server, measured against the Go reference (bench/README.md).
//   NODE_PATH=_tools/node/node_modules node bench/wsref/ws_node.js 127.0.0.1 18083
// GET / answers "ok"; /ws and /ws/deflate echo each message with its opcode.
// ws validates UTF-8 in text messages itself. permessage-deflate: context
// takeover both ways, threshold 0 (every message compressed), zlib level 1.
'use strict';
const http = require('http');
const { WebSocketServer } = require('ws');
const host = process.argv[2] || '127.0.0.1';
const port = +(process.argv[3] || 18083);
const server = http.createServer((req, res) => res.end('ok'));
const wss = new WebSocketServer({
  noServer: true,
  maxPayload: 64 << 20,
  perMessageDeflate: { threshold: 0, zlibDeflateOptions: { level: 1 } },
});
server.on('upgrade', (req, socket, head) => {
  if (req.url !== '/ws' && req.url !== '/ws/deflate') return socket.destroy();
  wss.handleUpgrade(req, socket, head, (ws) => {
    ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
  });
});
server.listen(port, host, () => console.log(`ws (node) listening on http://${host}:${port}/ws`));
