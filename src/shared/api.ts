/**
 * JSON shapes of /api/v1 as seen on the wire (dates are ISO 8601 strings), under the names the
 * code base has always used. Every one is `Static<>` of its schema in src/shared/contract/, the
 * single source: nothing here is written by hand. Every response is an envelope:
 * { success: true, data } or { success: false, error }.
 */
export type * from './contract/index.js';
export type { Wear as WireWear, TirePosition as WirePosition } from './contract/index.js';
