/**
 * The history's search, filters and loaded pages, kept while the clerk opens a scan (or a
 * customer report) from the list and comes back: "Back to history" or the browser's Back then
 * shows the same list with the same scan in focus, instead of an empty search. Forgotten on
 * the other pages, so History from the menu starts fresh.
 */
import type { VehicleGroup } from '../../../shared/api';
import type { ScanFilter } from '../api/client';

export interface HistoryMemory {
  accountId: string;
  draft: ScanFilter;
  filter: ScanFilter;
  /** The vehicles loaded, newest visit first, with the scans shown of each. */
  groups: VehicleGroup[];
  cursor: string | null;
  /** The scan opened from the list: its link takes the focus again on the way back. */
  opened: string | null;
}

let memory: HistoryMemory | null = null;

export function rememberHistory(next: HistoryMemory): void {
  memory = next;
}

export function recallHistory(accountId: string): HistoryMemory | null {
  return memory && memory.accountId === accountId ? memory : null;
}

/** Pages a clerk reaches from the history and comes back from. */
export function keepsHistory(page: string): boolean {
  return page === 'history' || page === 'report';
}

export function forgetHistory(): void {
  memory = null;
}
