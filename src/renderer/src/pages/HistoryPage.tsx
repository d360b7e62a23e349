/** Past scans, newest first: search by vehicle, filter by wear and date, load more, export CSV. */
import { useCallback, useEffect, useId, useState, type FormEvent } from 'react';
import type { WireScan, WireWear } from '../../../shared/api';
import { api, type ScanFilter } from '../api/client';
import { ErrorMessage } from '../components/ErrorMessage';
import { WearBadge } from '../components/WearBadge';
import { useSession } from '../hooks/useSession';
import { POSITION_LABEL, WEARS, WEAR_LABEL, formatDate, formatDepth } from '../lib/format';

const PAGE = 20;

export function HistoryPage() {
  const { prefs } = useSession();
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
    <section aria-labelledby="history-title">
      <h2 id="history-title">History</h2>
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
            <a href={`#/history/${encodeURIComponent(scan.scanId)}`} className="history-item" aria-label={`${scan.vehicle ?? 'Scan'} ${scan.position ?? ''} ${formatDate(scan.createdAt)}`}>
              <img src={scan.image.thumbnailUrl || api.imageUrl(scan.scanId, 'thumbnail')} alt="" loading="lazy" />
              <div className="history-text">
                <div className="history-title">
                  {scan.vehicle ?? 'No vehicle'}
                  {scan.position && <span className="muted"> · {POSITION_LABEL[scan.position]}</span>}
                </div>
                <div className="muted">{formatDate(scan.createdAt)}</div>
                <div>
                  {formatDepth(scan.result.estimatedDepthMm, prefs.units)}
                  {scan.measurementMm !== null && <span className="muted"> · gauge {scan.measurementMm.toFixed(1)} mm</span>}
                </div>
              </div>
              <WearBadge wear={scan.result.wear} />
            </a>
          </li>
        ))}
      </ul>
      {cursor && (
        <button type="button" className="secondary load-more" disabled={loading} onClick={() => void load(filter, cursor)}>
          {loading ? 'Loading…' : 'Load more'}
        </button>
      )}
    </section>
  );
}
