// Interop: Node's ws client against an echo route.
//   node node_client.js URL --deflate|--no-deflate   (NODE_PATH leads to ws)
// Prints "ok <check>" or "FAIL <check>: <why>" per check; exit 0 when all passed.
'use strict';
const crypto = require('crypto');
const WebSocket = require('ws');

const [url, mode] = process.argv.slice(2);
const deflate = mode === '--deflate';
let failed = false;
function check(name, cond, why) {
  if (cond) console.log('ok ' + name);
  else { failed = true; console.log('FAIL ' + name + ': ' + (why || '')); }
}

const ws = new WebSocket(url, { perMessageDeflate: deflate, rejectUnauthorized: false,
  maxPayload: 2 << 20 });
const queue = [];
let waiter = null;
ws.on('message', (data, isBinary) => {
  const m = { data, isBinary };
  if (waiter) { const w = waiter; waiter = null; w(m); } else queue.push(m);
});
function next() {
  if (queue.length) return Promise.resolve(queue.shift());
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('no message in 10 s')), 10000);
    waiter = (m) => { clearTimeout(t); resolve(m); };
  });
}
async function echo(name, payload, binary) {
  ws.send(payload, { binary });
  const m = await next();
  const same = binary ? m.isBinary && Buffer.compare(m.data, payload) === 0
    : !m.isBinary && m.data.toString('utf8') === payload;
  check(name + ' echoed', same, 'got ' + (m.isBinary ? 'binary' : 'text') + ' of ' + m.data.length + ' bytes');
}
const timer = setTimeout(() => { console.log('FAIL timeout: 30 s'); process.exit(1); }, 30000);
ws.on('error', (e) => { console.log('FAIL error: ' + e.message); process.exit(1); });
ws.on('open', async () => {
  try {
    const ext = ws.extensions;
    if (deflate) check('permessage-deflate negotiated', ext.includes('permessage-deflate'), 'extensions ' + JSON.stringify(ext));
    else check('no extension', ext === '', 'extensions ' + JSON.stringify(ext));
    await echo('text', 'hello', false);
    await echo('UTF-8 text', '\u03ba\u1f79\u03c3\u03bc\u03b5 \u{1f389}', false);
    await echo('binary', Buffer.from([...Array(256).keys()]), true);
    await echo('1 MB text', 'x'.repeat(500000) + 'y'.repeat(500000), false);
    await echo('1 MB binary', crypto.randomBytes(1000000), true);
    for (let i = 0; i < 20; i++) ws.send('burst-' + i);
    const got = [];
    for (let i = 0; i < 20; i++) got.push((await next()).data.toString());
    check('20 messages in a burst echoed in order', got.join() === [...Array(20).keys()].map((i) => 'burst-' + i).join(), got.join());
    const pong = new Promise((resolve) => ws.once('pong', (d) => resolve(d.toString())));
    ws.ping('node-ping');
    check('ping answered by a pong', (await pong) === 'node-ping');
    ws.on('close', (code) => {
      check('close answered with 1000', code === 1000, 'close code ' + code);
      clearTimeout(timer);
      process.exit(failed ? 1 : 0);
    });
    ws.close(1000);
  } catch (e) {
    console.log('FAIL exchange: ' + e.message);
    process.exit(1);
  }
});
