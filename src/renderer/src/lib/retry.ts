/**
 * Which failed uploads a retry must send under a new Idempotency-Key (the counter's "Try again",
 * hooks/useScanQueue.ts). No imports: the core's tests read it too.
 */

/** What this needs of an ApiError. */
interface Answer {
  code: string;
  status: number;
  headers: { has(name: string): boolean } | null;
}

/**
 * A 409 without Retry-After: the server refused a replay of this photo's Idempotency-Key because
 * the scan it made was deleted since, and will refuse that key again (a 409 for a request still
 * running carries Retry-After, and keeps its key so the photo is charged once).
 */
export function answeredForDeletedScan(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const answer = error as Partial<Answer>;
  return answer.status === 409 && answer.code === 'CONFLICT' && !answer.headers?.has('retry-after');
}
