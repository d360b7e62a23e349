/**
 * Past scans, newest first: search by vehicle, filter by wear and date, load more, export CSV.
 * Once this computer is linked to a hub, the chain's scans too ("All shops").
 */
import { useCallback, useEffect, useId, useState, type FormEvent } from 'react';
import type { WireScan, WireWear } from '../../../shared/api';
import { api, type ScanFilter } from '../api/client';
import { ErrorMessage } from '../components/ErrorMessage';
import { HubScanList } from '../components/HubScanList';
import { ScanSummary, scanLabel } from '../components/ScanSummary';
import { useSyncStatus } from '../hooks/useSyncStatus';
import { WEARS, WEAR_LABEL } from '../lib/format';

const PAGE = 20;

export function HistoryPage() {
  const { status: sync } = useSyncStatus(false);
  const [view, setView] = useState<'shop' | 'hub'>('shop');
  const hub = sync?.linked === true && view === 'hub';

  return (
    <section aria-labelledby="history-title">
      <h2 id="history-title">History</h2>
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
  const [draft, setDraft] = useState<ScanFilter>({ vehicle: '', wear: '', from: '', to: '' });
  const [filter, setFilter] = useState<ScanFilter>(draft);
  const [items, setItems] = useState<WireScan[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const ids = { vehicle: useId(), wear: useId(), from: useId(), to: useId() };

  const load = useCallback(async (f: ScanFilter, after: string | null) => {
    setLoading(true);
    setError(null);
    try {
      const page = await api.listScans(f, after ?? undefined, PAGE);
      setItems((old) => (after ? [...old, ...page.items] : page.items));
      setCursor(page.nextCursor);
    } catch (err) {
      setError(err);
    } finally {
      setLoading(false);
    }
  }, []);

  useEffect(() => {
    void load(filter, null);
  }, [filter, load]);

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
      <ul className="history-list">
        {items.map((scan) => (
          <li key={scan.scanId}>
            <a href={`#/history/${encodeURIComponent(scan.scanId)}`} className="history-item" aria-label={scanLabel(scan)}>
              <ScanSummary scan={scan} thumbnailUrl={scan.image.thumbnailUrl || api.imageUrl(scan.scanId, 'thumbnail')} />
            </a>
          </li>
        ))}
      </ul>
      {cursor && (
        <button type="button" className="secondary load-more" disabled={loading} onClick={() => void load(filter, cursor)}>
          {loading ? 'Loading…' : 'Load more'}
        </button>
      )}
    </>
  );
}
