/**
 * A pro account with an API key on a running server, made over the public API the way a
 * shop sets up its POS (register, sign in, redeem a license, create a key), so the bench
 * measures unmetered scans without touching the database behind the server's back.
 */
import http from 'node:http';

function request(
  url: URL,
  method: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; json: unknown }> {
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: { 'content-type': 'application/json', 'content-length': String(payload.length), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, json: JSON.parse(Buffer.concat(chunks).toString() || 'null') }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

function expectOk(step: string, res: { status: number; json: unknown }): void {
  if (res.status >= 300) throw new Error(`${step} failed: ${res.status} ${JSON.stringify(res.json)}`);
}

/** Returns an X-API-Key for a new account on `baseUrl`, made pro with `proCode` when given. */
export async function setUpAccount(baseUrl: string, proCode: string | null, email = `bench-${Date.now()}@example.com`): Promise<string> {
  const api = (p: string) => new URL(`/api/v1${p}`, baseUrl);
  const password = 'bench password 1';
  expectOk('register', await request(api('/auth/register'), 'POST', { email, password }));
  const login = await request(api('/auth/login'), 'POST', { email, password });
  expectOk('login', login);
  const cookie = (login.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]).join('; ');
  if (proCode) expectOk('license', await request(api('/licenses'), 'POST', { code: proCode }, { cookie }));
  const key = await request(api('/keys'), 'POST', { name: 'bench' }, { cookie });
  expectOk('key', key);
  return (key.json as { data: { key: string } }).data.key;
}
