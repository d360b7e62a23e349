/**
 * GET /connection: where a POS can reach this server, for the API keys page. Loopback (a POS on
 * this computer); with LAN access in force, this computer's LAN addresses and its name, as the
 * Host check accepts them (security.ts hostAllowList), so every URL listed is one that works.
 */
import os from 'node:os';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ConnectionInfo as WireConnectionInfo } from '../../../shared/api.js';
import type { Config } from '../../config.js';
import { ConnectionInfo, replies } from '../schemas.js';
import { ownHostNames } from '../security.js';
import { listeningPort } from './settings.js';

type Interfaces = ReturnType<typeof os.networkInterfaces>;

const WILDCARD = new Set(['0.0.0.0', '::', '[::]']);

function url(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Link-local (169.254/16, fe80::/10) and zoned addresses reach no POS reliably: not offered. */
function usable(address: string): boolean {
  return !address.includes('%') && !/^169\.254\./.test(address) && !/^fe[89ab][0-9a-f]:/i.test(address);
}

/**
 * The addresses, from the running config (`host`, `lanAccess` in force), the port listened on, the
 * interfaces and the name (both passed in, so tests need no real network). A server bound to one
 * LAN address is reached on that one alone (not on loopback).
 */
export function connectionInfo(config: Pick<Config, 'host' | 'lanAccess'>, port: number, interfaces: Interfaces, hostname: string): WireConnectionInfo {
  const host = config.host.replace(/^\[(.*)\]$/, '$1');
  const wildcard = WILDCARD.has(config.host);
  const addresses: WireConnectionInfo['addresses'] = [];
  const loopback = host === 'localhost' || host === '::1' || /^127\./.test(host);
  if (wildcard || loopback) {
    const local = loopback && host !== 'localhost' ? host : '127.0.0.1';
    addresses.push({ address: local, family: local.includes(':') ? 6 : 4, kind: 'loopback', url: url(local, port) });
  }
  if (!config.lanAccess) return { port, lanAccess: false, hostname: null, addresses };
  const lan = Object.values(interfaces)
    .flat()
    .filter((info): info is os.NetworkInterfaceInfo => info !== undefined && !info.internal && usable(info.address))
    // bound to all IPv4 (0.0.0.0): IPv4 only; to :: (dual stack): both; to one address: that one
    .filter((info) => {
      if (!wildcard) return info.address.toLowerCase() === host.toLowerCase();
      return config.host !== '0.0.0.0' || info.family === 'IPv4';
    });
  const seen = new Set<string>();
  for (const family of ['IPv4', 'IPv6'] as const) {
    for (const info of lan.filter((i) => i.family === family)) {
      if (seen.has(info.address)) continue;
      seen.add(info.address);
      addresses.push({ address: info.address, family: family === 'IPv4' ? 4 : 6, kind: 'lan', url: url(info.address, port) });
    }
  }
  const names = ownHostNames(hostname);
  const name = hostname.trim().replace(/\.$/, '');
  if (names.length > 0 && (wildcard || lan.length > 0)) {
    addresses.push({ address: name, family: null, kind: 'name', url: url(name, port) });
  }
  return { port, lanAccess: true, hostname: names.length > 0 ? name : null, addresses };
}

export const connectionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { config } = app.core;
  app.get(
    '/connection',
    {
      config: { auth: 'session' },
      schema: {
        tags: ['keys'],
        summary: 'The addresses a POS can use to reach this server (signed in)',
        response: replies(ConnectionInfo),
      },
    },
    async () => ({
      success: true as const,
      data: connectionInfo(config, listeningPort(app.server, config.port), os.networkInterfaces(), os.hostname()),
    }),
  );
};
