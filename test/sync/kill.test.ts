/**
 * The desktop as its own process, killed (SIGKILL) while an upload hangs, then started
 * again on the same data dir: it resumes after the last change the hub acknowledged and
 * the hub ends with every scan exactly once.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { makeJpeg } from '../fixtures/images/make.js';
import { imageForm, PASSWORD } from '../http/helpers.js';
import { spawnInstance, type Instance } from '../hub/instances.js';
import { makeTestLicenseKeys } from '../support/licenses.js';
import { uploadGate, type Gate } from './gate.js';
import { hubAccount, hubScans, removeNode, startNode, type Node } from './nodes.js';

let hub: Node | null = null;
let gate: Gate | null = null;
let desktops: Instance[] = [];
let dataDir: string | null = null;
afterEach(async () => {
  await Promise.all(desktops.map((desktop) => desktop.stop()));
  await gate?.close();
  await removeNode(hub);
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  desktops = [];
  hub = null;
  gate = null;
  dataDir = null;
});

async function json(res: Response): Promise<{ data: Record<string, unknown> }> {
  return (await res.json()) as { data: Record<string, unknown> };
}

it('resumes after being killed in the middle of an upload', async () => {
  hub = await startNode();
  const { key } = await hubAccount(hub);
  gate = await uploadGate(hub.url, 2);
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'tirewear-desk-'));
  const env = {
    TIREWEAR_DATA_DIR: dataDir,
    TIREWEAR_HUB_URL: gate.url,
    TIREWEAR_HUB_API_KEY: key,
    TIREWEAR_LICENSE_PUBLIC_KEY: makeTestLicenseKeys().publicKeyPem,
  };
  const desk = await spawnInstance(env);
  desktops.push(desk);

  const credentials = JSON.stringify({ email: 'counter@shop.example', password: PASSWORD });
  const jsonHeaders = { 'content-type': 'application/json' };
  await fetch(`${desk.url}/api/v1/auth/register`, { method: 'POST', body: credentials, headers: jsonHeaders });
  const login = await fetch(`${desk.url}/api/v1/auth/login`, { method: 'POST', body: credentials, headers: jsonHeaders });
  const cookie = /auth-token=[^;]+/.exec(login.headers.get('set-cookie') ?? '')![0];
  for (let shade = 60; shade < 160; shade += 20) {
    const upload = imageForm(await makeJpeg({ width: 320, height: 256, shade }));
    const res = await fetch(`${desk.url}/api/v1/analyze`, {
      method: 'POST',
      body: new Uint8Array(upload.payload),
      headers: { ...upload.headers, cookie },
    });
    expect(res.status).toBe(200);
  }

  void fetch(`${desk.url}/api/v1/sync/run`, { method: 'POST', headers: { cookie } }).catch(() => undefined);
  await gate.holding;
  desk.child.kill('SIGKILL');
  await desk.stop();
  expect(gate.passed).toBe(2);

  gate.open();
  const again = await spawnInstance(env);
  desktops.push(again);
  const status = await json(await fetch(`${again.url}/api/v1/sync/run`, { method: 'POST', headers: { cookie } }));
  expect(status.data).toMatchObject({ linked: true, pending: 0, lastError: null });
  expect(gate.passed).toBe(5);
  expect(await hubScans(hub, key)).toHaveLength(5);
}, 120_000);
