/** Scans with a shop's gauge readings through the API, for the calibration tests. */
import { readFile } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { heldoutLabels, type Labelled } from '../analysis/helpers.js';
import { imageForm } from '../http/helpers.js';

/**
 * The first 40 held-out tires with a depth, each scanned with the API key `key` (and `fields`), and
 * given the reading of a shop gauge that reads 1.3 × the render's truth + 0.4 mm (photos its models
 * read too shallow), saved with the headers `saveWith` (a session's cookie, or the key). Returns the tires.
 */
export async function scanWithDeepGauge(
  app: FastifyInstance,
  key: string,
  saveWith: Record<string, string>,
  fields: Record<string, string> = {},
): Promise<Labelled[]> {
  const tires = heldoutLabels()
    .filter((l) => l.depthMm !== null)
    .slice(0, 40);
  for (const tire of tires) {
    const upload = imageForm(await readFile(tire.file), fields);
    const res = await app.inject({ method: 'POST', url: '/api/v1/analyze', payload: upload.payload, headers: { ...upload.headers, 'x-api-key': key } });
    expect(res.statusCode, res.body).toBe(200);
    const gauge = Math.round((1.3 * tire.depthMm! + 0.4) * 10) / 10;
    const put = await app.inject({
      method: 'PUT',
      url: `/api/v1/scans/${res.json().data.scanId}/measurement`,
      headers: saveWith,
      payload: { measurementMm: gauge },
    });
    expect(put.statusCode, put.body).toBe(200);
  }
  return tires;
}
