import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/core/config.js';
import { describeStartupFailure } from '../../src/main/startup-error.js';

const where = { host: '127.0.0.1', port: 8787, dataDir: path.join('/', 'users', 'shop', 'TireWear', 'data') };

function listen(server: net.Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
}

describe('startup failure dialog', () => {
  it('explains a taken port and how to choose another', async () => {
    const holder = net.createServer();
    await listen(holder, 0);
    const port = (holder.address() as net.AddressInfo).port;
    const error = await listen(net.createServer(), port).catch((e: unknown) => e);
    holder.close();

    const failure = describeStartupFailure(error, { ...where, port });
    expect(failure.message).toBe(`Port ${port} on 127.0.0.1 is already in use.`);
    expect(failure.detail).toContain(path.join(where.dataDir, 'settings.json'));
    expect(failure.detail).toContain('TIREWEAR_PORT');
  });

  it('a port it may not use names the cause Windows often has (a range reserved by Hyper-V, WSL or Docker)', () => {
    const denied = Object.assign(new Error('listen EACCES: permission denied 127.0.0.1:8787'), { code: 'EACCES' });
    const failure = describeStartupFailure(denied, where);
    expect(failure.message).toBe('TireWear may not listen on 127.0.0.1:8787 (EACCES).');
    expect(failure.detail).toMatch(/excludedportrange/);
    const notHere = Object.assign(new Error('listen EADDRNOTAVAIL'), { code: 'EADDRNOTAVAIL' });
    expect(describeStartupFailure(notHere, where).detail).not.toMatch(/excludedportrange/);
  });

  it("a file's EACCES is about the file, not the port", () => {
    const denied = Object.assign(new Error("EACCES: permission denied, mkdir '/Volumes/Shop/TireWear/images'"), {
      code: 'EACCES',
      syscall: 'mkdir',
      path: '/Volumes/Shop/TireWear/images',
    });
    const failure = describeStartupFailure(denied, where);
    expect(failure.message).toBe(denied.message);
    expect(failure.detail).toMatch(/may not write that file or folder: check its permissions/);
    expect(failure.detail).not.toMatch(/port|excludedportrange/i);
  });

  it('shows a settings problem with its own message', () => {
    const failure = describeStartupFailure(new ConfigError('TIREWEAR_PORT must be an integer from 0 to 65535, got "x"'), where);
    expect(failure.title).toBe('TireWear settings are invalid');
    expect(failure.message).toContain('TIREWEAR_PORT');
  });

  it('still says something useful about an unexpected error', () => {
    const failure = describeStartupFailure(new Error('database disk image is malformed'), where);
    expect(failure.message).toBe('database disk image is malformed');
    expect(failure.detail).toContain(where.dataDir);
  });
});
