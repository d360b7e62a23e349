/**
 * A hub behind a proxy on its own host sees every caller as this computer. Its desk routes must
 * not then be anyone's: it never links to another hub (that pushed every account's scans to a
 * stranger's server in an audit), and its settings and calibration are the owner's, the
 * account registered first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/core/config.js';
import { expectError, signIn } from '../http/helpers.js';
import { removeNode, startNode, type Node } from '../sync/nodes.js';
import { freshSchema, TEST_DATABASE_URL, type TestSchema } from './pg.js';

describe.skipIf(!TEST_DATABASE_URL)("a hub's desk routes", () => {
  let schema: TestSchema;
  let hub: Node;
  let owner: { cookie: string };
  let stranger: { cookie: string };

  beforeAll(async () => {
    schema = await freshSchema();
    hub = await startNode({ config: { databaseUrl: schema.url } });
    owner = await signIn(hub.app);
    hub.clock.advance(60_000); // registered a minute later (the test clock stands still otherwise)
    stranger = await signIn(hub.app);
  }, 60_000);
  afterAll(async () => {
    await removeNode(hub);
    await schema?.drop();
  });

  it('never links to another hub, nor says it could: 403 for every account, the owner too', async () => {
    for (const { cookie } of [owner, stranger]) {
      const link = await hub.app.inject({
        method: 'PUT',
        url: '/api/v1/sync/link',
        headers: { cookie },
        payload: { hubUrl: 'http://203.0.113.9:8787', hubApiKey: `tw_${'a'.repeat(32)}` },
      });
      // (the stranger is refused sooner, as not the owner)
      expect(expectError(link, 403, 'FORBIDDEN')).toMatch(cookie === owner.cookie ? /is a hub: it does not link to another hub/ : /hub's owner/);
      for (const [method, url] of [
        ['GET', '/api/v1/sync/status'],
        ['POST', '/api/v1/sync/run'],
        ['GET', '/api/v1/sync/hub-scans'],
        ['DELETE', '/api/v1/sync/link'],
      ] as const) {
        expectError(await hub.app.inject({ method, url, headers: { cookie } }), 403, 'FORBIDDEN');
      }
    }
  });

  it('lets only the owner change settings or start a calibration', async () => {
    const put = (cookie: string) => hub.app.inject({ method: 'PUT', url: '/api/v1/settings', headers: { cookie }, payload: { shopName: 'Chain office' } });
    expect(expectError(await put(stranger.cookie), 403, 'FORBIDDEN')).toMatch(/hub's owner \(the account registered first\)/);
    expectError(await hub.app.inject({ url: '/api/v1/settings', headers: { cookie: stranger.cookie } }), 403, 'FORBIDDEN');
    expectError(await hub.app.inject({ method: 'POST', url: '/api/v1/calibration', headers: { cookie: stranger.cookie }, payload: {} }), 403, 'FORBIDDEN');
    expect((await put(owner.cookie)).statusCode).toBe(200);
    expect((await hub.app.inject({ url: '/api/v1/calibration', headers: { cookie: owner.cookie } })).statusCode).toBe(200);
  });

  it('will not start with a hub link of its own', () => {
    const env = {
      TIREWEAR_DATABASE_URL: schema.url,
      TIREWEAR_HUB_URL: 'https://hub.example',
      TIREWEAR_HUB_API_KEY: `tw_${'a'.repeat(32)}`,
      TIREWEAR_DATA_DIR: hub.dataDir,
    };
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(/a hub does not link to another hub/);
  });
});
