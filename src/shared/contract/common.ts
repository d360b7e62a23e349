/**
 * Building blocks of the contract (src/shared/contract/): the small schemas and lists every area
 * uses. The contract is the one source of the /api/v1 wire shapes: the server validates and
 * serializes with these schemas and documents them in OpenAPI, and every TypeScript type of the
 * wire is `Static<>` of its schema, in core and renderer alike. Nothing here imports Node.
 */
import { Type, type SchemaOptions, type TSchema, type TString, type TUnsafe } from '@sinclair/typebox';
import { WEAR_CLASSES, type Wear } from '../units.js';

export { WEAR_CLASSES, type Wear };

export const TIRE_POSITIONS = ['FL', 'FR', 'RL', 'RR', 'SPARE'] as const;
export type TirePosition = (typeof TIRE_POSITIONS)[number];

/** The fields a scan's corrections change (PATCH /scans/:id, PUT /measurement, sync). */
export const SCAN_CHANGE_FIELDS = ['vehicle', 'position', 'measurementMm'] as const;
export type ScanChangeField = (typeof SCAN_CHANGE_FIELDS)[number];
/** How a change was made: signed in, through an API key, by an anonymous scan's holder, or merged from a shop. */
export const SCAN_CHANGE_VIAS = ['session', 'key', 'anonymous', 'sync'] as const;
export type ScanChangeVia = (typeof SCAN_CHANGE_VIAS)[number];
/** A scan keeps its newest corrections up to this many (a typo fixed back and forth cannot grow it without end). */
export const SCAN_CHANGES_KEPT = 50;

export const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
/** A request field of one of these values exactly (a response field is looseEnum). */
export const literals = <T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)));
/** A wear band, in a request (the filters of /scans, /vehicles and the export). */
export const WearSchema = literals(WEAR_CLASSES);
export const IsoDate = Type.String({ format: 'date-time' });
export const Empty = Type.Object({});

/**
 * A response field the server writes from stored data (docs/API.md §9, "loose response schemas"):
 * the JSON schema stays a plain string (with `enum` where given, for the document), so the
 * serializer passes an older stored value through instead of answering 500 (an anyOf of literals
 * would refuse it), while the TypeScript type is the union of the values written today. Readers
 * treat an unknown value as they would a missing one.
 */
export function looseEnum<T extends string>(values: readonly T[] | null, options: SchemaOptions = {}): TUnsafe<T> {
  const schema: TString = Type.String(values === null ? options : { enum: [...values], ...options });
  return Type.Unsafe<T>(schema);
}

/** `{ success: true, data }` */
export const ok = <T extends TSchema>(data: T) => Type.Object({ success: Type.Literal(true), data });
