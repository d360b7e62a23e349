/**
 * Past scans, newest first: search by vehicle, filter by wear and date, load more, export CSV.
 * Once this computer is linked to a hub, the chain's scans too ("All shops").
 */
import { useCallback, useEffect, useId, useRef, useState, type FormEvent } from 'react';
import type { WireScan, WireWear } from '../../../shared/api';
import { api, type ScanFilter } from '../api/client';
import { ErrorMessage } from '../components/ErrorMessage';
import { HubScanList } from '../components/HubScanList';
import { ScanSummary } from '../components/ScanSummary';
import { useSession } from '../hooks/useSession';
import { useSyncStatus } from '../hooks/useSyncStatus';
import { WEARS, WEAR_LABEL } from '../lib/format';
import { recallHistory, rememberHistory } from '../lib/historyMemory';
import { BusyButton } from '../components/BusyButton';

const PAGE = 20;
/** The server's largest page (MAX_PAGE): coming back re-reads the pages already loaded in one request. */
const MAX_PAGE = 100;
const EMPTY: ScanFilter = { vehicle: '', wear: '', from: '', to: '' };

export function HistoryPage() {
  const { status: sync } = useSyncStatus(false);
  const [view, setView] = useState<'shop' | 'hub'>('shop');
  const hub = sync?.linked === true && view === 'hub';

  return (
    <section aria-labelledby="history-title">
      <h2 id="history-title" tabIndex={-1}>
        History
      </h2>
      {sync?.linked && (
        <div className="view-switch" role="group" aria-label="Whose scans">
          <button type="button" aria-pressed={!hub} onClick={() => setView('shop')}>
            This shop
          </button>
          <button type="button" aria-pressed={hub} onClick={() => setView('hub')}>
            All shops (hub)
          </button>
        </div>
      )}
      {hub ? <HubScanList hubUrl={sync.hubUrl} /> : <ShopScans />}
    </section>
  );
}

/** This computer's own scans, with the filters, detail links and the CSV export. */
function ShopScans() {
  const accountId = useSession().account?.account.id ?? '';
  /** Coming back from a scan opened in this list: the same search, pages and focus. */
  const [back] = useState(() => recallHistory(accountId));
  const [draft, setDraft] = useState<ScanFilter>(back?.draft ?? EMPTY);
  const [filter, setFilter] = useState<ScanFilter>(back?.filter ?? EMPTY);
  const [items, setItems] = useState<WireScan[]>(back?.items ?? []);
  const [cursor, setCursor] = useState<string | null>(back?.cursor ?? null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const opened = useRef<string | null>(back?.opened ?? null);
  const list = useRef<HTMLUListElement>(null);
  const ids = { vehicle: useId(), wear: useId(), from: useId(), to: useId() };

  const load = useCallback(async (f: ScanFilter, after: string | null, size = PAGE) => {
    setLoading(true);
    setError(null);
    try {
      const page = await api.listScans(f, after ?? undefined, size);
      setItems((old) => (after ? [...old, ...page.items] : page.items));
      setCursor(page.nextCursor);
      return page.items;
    } catch (err) {
      setError(err);
      return null;
    } finally {
      setLoading(false);
    }
  }, []);

  useEffect(() => {
    // Back from a scan: read again as many as were loaded (one was perhaps deleted), then focus the scan opened.
    const size = back && filter === back.filter ? Math.min(MAX_PAGE, Math.max(PAGE, back.items.length)) : PAGE;
    void load(filter, null, size).then((loaded) => {
      const id = opened.current;
      opened.current = null;
      if (!id || !loaded) return;
      const link = list.current?.querySelector<HTMLElement>(`a[data-scan-id="${CSS.escape(id)}"]`);
      if (link) link.focus();
      else document.getElementById('history-title')?.focus();
    });
  }, [filter, load, back]);

  useEffect(() => {
    rememberHistory({ accountId, draft, filter, items, cursor, opened: opened.current });
  }, [accountId, draft, filter, items, cursor]);

  /** The next page; the first scan of it takes the focus, where reading goes on (the button is gone after the last page). */
  const loadMore = async (after: string) => {
    const first = items.length;
    const loaded = await load(filter, after);
    if (!loaded || loaded.length === 0) return;
    requestAnimationFrame(() => list.current?.querySelectorAll<HTMLElement>('a.history-item')[first]?.focus());
  };

  const apply = (event: FormEvent) => {
    event.preventDefault();
    setFilter({ ...draft });
  };
  const vehicle = filter.vehicle?.trim();

  return (
    <>
      <form className="filters" onSubmit={apply} role="search">
        <div className="field">
          <label htmlFor={ids.vehicle}>Vehicle / plate</label>
          <input id={ids.vehicle} type="search" value={draft.vehicle} onChange={(e) => setDraft({ ...draft, vehicle: e.target.value })} />
        </div>
        <div className="field">
          <label htmlFor={ids.wear}>Wear</label>
          <select id={ids.wear} value={draft.wear} onChange={(e) => setDraft({ ...draft, wear: e.target.value as WireWear | '' })}>
            <option value="">All</option>
            {WEARS.map((w) => (
              <option key={w} value={w}>
                {WEAR_LABEL[w]}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={ids.from}>From</label>
          <input id={ids.from} type="date" value={draft.from} onChange={(e) => setDraft({ ...draft, from: e.target.value })} />
        </div>
        <div className="field">
          <label htmlFor={ids.to}>To</label>
          <input id={ids.to} type="date" value={draft.to} onChange={(e) => setDraft({ ...draft, to: e.target.value })} />
        </div>
        <div className="field field-actions">
          <button type="submit">Search</button>
          <a className="button secondary" href={api.exportUrl(filter)} download>
            Export CSV
          </a>
          {vehicle && (
            <a className="button secondary" href={`#/report?vehicle=${encodeURIComponent(vehicle)}`}>
              Report for {vehicle}
            </a>
          )}
        </div>
      </form>
      <ErrorMessage error={error} />
      {!loading && !error && items.length === 0 && <p className="empty">No scans match. Scans you make while signed in appear here.</p>}
      {/* always present, so a search's outcome is announced (a region added with its text often is not) */}
      <p className="sr-only" aria-live="polite" data-testid="history-status">
        {loading || error ? '' : items.length === 0 ? 'No scans match the search.' : `${items.length} ${items.length === 1 ? 'scan' : 'scans'} shown${cursor ? ', more can be loaded' : ''}.`}
      </p>
      <ul className="history-list" ref={list}>
        {items.map((scan) => (
          <li key={scan.scanId}>
            <a
              href={`#/history/${encodeURIComponent(scan.scanId)}`}
              className="history-item"
              data-scan-id={scan.scanId}
              onClick={() => rememberHistory({ accountId, draft, filter, items, cursor, opened: scan.scanId })}
            >
              <ScanSummary scan={scan} thumbnailUrl={scan.image.thumbnailUrl || api.imageUrl(scan.scanId, 'thumbnail')} />
            </a>
          </li>
        ))}
      </ul>
      {cursor && (
        <BusyButton type="button" className="secondary load-more" busy={loading} onClick={() => void loadMore(cursor)}>
          {loading ? 'Loading…' : 'Load more'}
        </BusyButton>
      )}
    </>
  );
}
