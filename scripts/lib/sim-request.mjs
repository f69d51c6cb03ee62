// One call to the kube-simulator's control API (HTTPS, self-signed, no token), for scripts:
//   node scripts/lib/sim-request.mjs METHOD URL [JSON-BODY]
// Prints the answer; exits 1 on a non-2xx answer or a connection error.
import https from 'node:https';

const [method, url, body] = process.argv.slice(2);
if (!method || !url) {
  console.error('usage: sim-request.mjs METHOD URL [JSON-BODY]');
  process.exit(2);
}
const req = https.request(
  url,
  {
    method,
    rejectUnauthorized: false,
    headers: body ? { 'content-type': 'application/json' } : {},
  },
  res => {
    let text = '';
    res.on('data', chunk => (text += chunk));
    res.on('end', () => {
      process.stdout.write(`${text}\n`);
      if (res.statusCode < 200 || res.statusCode >= 300) {
        console.error(`${method} ${url}: HTTP ${res.statusCode}`);
        process.exit(1);
      }
    });
  },
);
req.on('error', error => {
  console.error(`${method} ${url}: ${error.message}`);
  process.exit(1);
});
req.end(body);
