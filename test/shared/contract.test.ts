/**
 * The contract (src/shared/contract/) is the one source of the wire: every error code has its
 * status, every wire type is the schema's own `Static<>`, and the core, the sync wire and the
 * renderer use those very types and codes (a mismatch is a compile error; the type assertions here
 * are checked by `npm run typecheck`, the values by vitest). The renderer's side of the types is
 * test/renderer/contract.test-d.ts (checked with the renderer's tsconfig).
 */
import type { Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import { ERROR_STATUS as CORE_ERROR_STATUS } from '../../src/core/errors.js';
import type { ScanChange as CoreScanChange, TirePosition as CoreTirePosition } from '../../src/core/types.js';
import { toSyncScan, type SyncScan } from '../../src/core/sync/wire.js';
import { MAX_MEASUREMENT_MM as SERVICE_MAX_MEASUREMENT_MM } from '../../src/core/services/scans.js';
import type * as api from '../../src/shared/api.js';
import { GAUGE_MAX_MM } from '../../src/shared/gauge.js';
import {
  ERROR_CODES,
  ERROR_STATUS,
  ErrorEnvelope,
  MAX_MEASUREMENT_MM,
  MeasurementBody,
  PatchBody,
  SyncScanSchema,
  WireResult,
  type WireScan,
  type ErrorCode,
} from '../../src/shared/contract/index.js';
import { makeScan, randomId } from '../support/store.js';

describe('error codes', () => {
  it('every code has an HTTP error status, and the envelope documents exactly these codes', () => {
    expect(ERROR_CODES.length).toBeGreaterThan(0);
    for (const code of ERROR_CODES) {
      expect(ERROR_STATUS[code], code).toBeGreaterThanOrEqual(400);
      expect(ERROR_STATUS[code], code).toBeLessThan(600);
    }
    const documented = (ErrorEnvelope.properties.error.properties.code as unknown as { enum: string[] }).enum;
    expect(documented).toEqual(Object.keys(ERROR_STATUS));
    expect(CORE_ERROR_STATUS).toBe(ERROR_STATUS);
  });

  it("the core's AppError takes the contract's codes and answers with the contract's status", () => {
    expectTypeOf<AppError['code']>().toEqualTypeOf<ErrorCode>();
    expectTypeOf<api.ErrorEnvelope['error']['code']>().toEqualTypeOf<ErrorCode>();
    // @ts-expect-error: a code the contract does not list is a compile error
    expect(() => new AppError('NOT_A_CODE', 'x')).not.toThrow();
    for (const code of ERROR_CODES) expect(new AppError(code, 'x').status).toBe(ERROR_STATUS[code]);
  });

  it('the renderer has words for every code of the contract (its type: test/renderer/contract.test-d.ts)', async () => {
    // a path the node typecheck does not follow: the renderer's module is typed by its own tsconfig
    const path = '../../src/renderer/src/api/errors.js';
    const { FRIENDLY } = (await import(path)) as { FRIENDLY: Record<string, string> };
    for (const code of ERROR_CODES) expect(FRIENDLY[code], code).toMatch(/\w/);
  });
});

describe('types are the schemas', () => {
  it('the names of src/shared/api.ts are Static<> of the schemas', () => {
    expectTypeOf<api.WireScan>().toEqualTypeOf<Static<typeof WireScan>>();
    expectTypeOf<api.WireResult>().toEqualTypeOf<Static<typeof WireResult>>();
    expectTypeOf<api.ScanPatchBody>().toEqualTypeOf<Static<typeof PatchBody>>();
    // loose in the JSON schema, narrow in the type (docs/API.md §9, item 12)
    expectTypeOf<api.WireResult['wear']>().toEqualTypeOf<api.WireWear>();
    expectTypeOf<api.WireScan['position']>().toEqualTypeOf<api.WirePosition | null>();
    expectTypeOf<api.ScanChange['via']>().toEqualTypeOf<CoreScanChange['via']>();
    expectTypeOf<api.WirePosition>().toEqualTypeOf<CoreTirePosition>();
  });

  it('the sync wire carries the result analyze answers (without its verbose extras)', () => {
    expectTypeOf<SyncScan['result']>().toExtend<Omit<api.WireResult, 'overlays' | 'points'>>();
    const resultFields = Object.keys(SyncScanSchema.properties.result.properties).sort();
    const wireFields = Object.keys(WireResult.properties).filter((name) => name !== 'overlays' && name !== 'points');
    expect(resultFields).toEqual(wireFields.sort());
  });
});

describe('one gauge bound (docs/API.md §9, item 9)', () => {
  it('PUT /measurement, PATCH, the scan service, the sync wire and the counter take the same 30 mm', () => {
    expect(MAX_MEASUREMENT_MM).toBe(30);
    expect(SERVICE_MAX_MEASUREMENT_MM).toBe(MAX_MEASUREMENT_MM);
    expect(GAUGE_MAX_MM, "the counter's gauge input").toBe(MAX_MEASUREMENT_MM);
    const wire = toSyncScan(makeScan({ id: randomId() }));
    for (const [mm, ok] of [
      [MAX_MEASUREMENT_MM, true],
      [35, false],
    ] as const) {
      expect(Value.Check(SyncScanSchema, { ...wire, measurementMm: mm }), `sync ${mm}`).toBe(ok);
      expect(Value.Check(MeasurementBody, { measurementMm: mm }), `measurement ${mm}`).toBe(ok);
      expect(Value.Check(PatchBody, { measurementMm: mm }), `patch ${mm}`).toBe(ok);
    }
  });
});
