/**
 * Three builds: main (ESM, like the package; every dependency stays external and is loaded
 * from node_modules, so native modules keep their binaries), preload (CommonJS, because a
 * sandboxed preload cannot be an ES module; electron is its only import), renderer (React).
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'electron-vite';
import react from '@vitejs/plugin-react';

const root = fileURLToPath(new URL('.', import.meta.url));

/** `npm run dev`: the hot-reloading renderer reaches the in-process core through this proxy. */
function devApiProxy() {
  const target = `http://127.0.0.1:${process.env.TIREWEAR_PORT ?? '8787'}`;
  // The core checks Host and Origin on cookie requests: a call from the dev server's own page is
  // made same-origin to it; any other page's Origin is passed on as it came (and refused there),
  // so a site open in the developer's browser cannot use the proxy to post to the core.
  return {
    '/api': {
      target,
      changeOrigin: true,
      configure: (proxy: {
        on(
          event: 'proxyReq',
          listener: (request: { setHeader(name: string, value: string): void }, incoming: { headers: Record<string, string | string[] | undefined> }) => void,
        ): void;
      }) => {
        proxy.on('proxyReq', (request, incoming) => {
          const origin = incoming.headers.origin;
          if (typeof origin === 'string' && sameHost(origin, incoming.headers.host)) request.setHeader('origin', target);
        });
      },
    },
  };
}

function sameHost(origin: string, host: string | string[] | undefined): boolean {
  try {
    return typeof host === 'string' && new URL(origin).host === host;
  } catch {
    return false;
  }
}

export default defineConfig({
  main: {
    build: {
      outDir: resolve(root, 'out/main'),
      externalizeDeps: true,
      rolldownOptions: {
        input: { index: resolve(root, 'src/main/index.ts') },
      },
    },
  },
  preload: {
    build: {
      outDir: resolve(root, 'out/preload'),
      rolldownOptions: {
        input: { index: resolve(root, 'src/preload/index.ts') },
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: resolve(root, 'src/renderer'),
    base: './',
    plugins: [react()],
    server: { proxy: devApiProxy() },
    build: {
      outDir: resolve(root, 'out/renderer'),
      rolldownOptions: { input: { index: resolve(root, 'src/renderer/index.html') } },
    },
  },
});
