/**
 * The floor under the HTTP overhead: `npx tsx bench/http-floor.ts [--runs 40]`.
 * Sends the bench's photos (bench/images.ts) to a bare Fastify server with @fastify/multipart, in
 * this process, whose route reads the image part into one buffer and answers its length: no
 * validation, hashing, storage or analysis. Prints, per photo, the p50 and p95 of a whole request
 * (client included: building the form, sending it over loopback, reading the answer) and the CPU
 * per request of this process (client and server together). What `npm run bench` reports as HTTP
 * overhead above this is the service's own (docs/PERFORMANCE.md).
 */
import multipart from '@fastify/multipart';
import Fastify from 'fastify';
import { checkFlags } from './cli.js';
import { benchImages } from './images.js';

const usage = 'usage: npx tsx bench/http-floor.ts [--runs 40]';
checkFlags(['runs'], usage);
const argv = process.argv.slice(2);
const runsAt = argv.indexOf('--runs');
const runs = runsAt >= 0 ? Number(argv[runsAt + 1]) : 40;
if (!Number.isInteger(runs) || runs < 5) {
  process.stderr.write(`--runs must be a whole number of at least 5\n${usage}\n`);
  process.exit(2);
}

const LIMIT = 20 * 1024 * 1024;
const app = Fastify({ logger: false });
await app.register(multipart, { limits: { fileSize: LIMIT, files: 1 } });
app.post('/upload', async (request) => {
  let bytes = 0;
  for await (const part of request.parts()) if (part.type === 'file') bytes += (await part.toBuffer()).length;
  return { bytes };
});
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
if (address === null || typeof address === 'string') throw new Error('no port');
const url = `http://127.0.0.1:${address.port}/upload`;

const pct = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
console.log(`| image | bytes | p50 ms | p95 ms | CPU ms / request (client and server) |`);
console.log(`|---|---:|---:|---:|---:|`);
for (const image of await benchImages()) {
  const send = async () => {
    const form = new FormData();
    form.append('image', new Blob([image.data], { type: image.mime }), 'photo');
    const response = await fetch(url, { method: 'POST', body: form });
    const body = (await response.json()) as { bytes: number };
    if (body.bytes !== image.data.length) throw new Error(`the server read ${body.bytes} of ${image.data.length} bytes`);
  };
  for (let i = 0; i < 3; i++) await send();
  const times: number[] = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await send();
    times.push(performance.now() - t0);
  }
  const cpu = process.cpuUsage(cpu0);
  times.sort((a, b) => a - b);
  const cpuMs = (cpu.user + cpu.system) / 1000 / runs;
  console.log(
    `| ${image.name} | ${image.data.length.toLocaleString('en')} | ${pct(times, 0.5).toFixed(1)} | ${pct(times, 0.95).toFixed(1)} | ${cpuMs.toFixed(1)} |`,
  );
}
await app.close();
