/**
 * The chain's scans as the hub holds them, every linked shop's, read through this
 * computer (the hub key never reaches the window). Read-only: a gauge reading or a
 * deletion belongs to the shop that made the scan.
 */
import { useCallback, useEffect, useState } from 'react';
import type { WireScan } from '../../../shared/api';
import { ApiError, api } from '../api/client';
import { ErrorMessage } from './ErrorMessage';
import { ScanSummary, scanLabel } from './ScanSummary';

const PAGE = 20;

export function HubScanList({ hubUrl }: { hubUrl: string | null }) {
  const [items, setItems] = useState<WireScan[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const load = useCallback(async (after: string | null) => {
    setLoading(true);
    setError(null);
    try {
      const page = await api.hubScans(after ?? undefined, PAGE);
      setItems((old) => (after ? [...old, ...page.items] : page.items));
      setCursor(page.nextCursor);
    } catch (err) {
      setError(err);
    } finally {
      setLoading(false);
    }
  }, []);

  useEffect(() => {
    void load(null);
  }, [load]);

  return (
    <div className="hub-scans">
      <div className="toolbar">
        <p className="muted">
          Scans of every shop linked to {hubUrl ?? 'the hub'}, newest first. Read-only here: gauge readings and deletions are made at the shop
          that took the scan.
        </p>
        <button type="button" className="secondary" disabled={loading} onClick={() => void load(null)}>
          Refresh
        </button>
      </div>
      <HubError error={error} />
      {!loading && !error && items.length === 0 && <p className="empty">The hub has no scans yet. Scans appear here once a shop has synced.</p>}
      <ul className="history-list">
        {items.map((scan) => (
          <li key={scan.scanId} className="history-item hub-item" aria-label={scanLabel(scan)}>
            <ScanSummary scan={scan} thumbnailUrl={scan.image.thumbnailUrl} />
          </li>
        ))}
      </ul>
      {cursor && (
        <button type="button" className="secondary load-more" disabled={loading} onClick={() => void load(cursor)}>
          {loading ? 'Loading…' : 'Load more'}
        </button>
      )}
    </div>
  );
}

/** The desk answers 503 when the hub cannot be read: say it is the hub, not this computer's database. */
function HubError({ error }: { error: unknown }) {
  if (!(error instanceof ApiError) || error.code !== 'STORAGE_UNAVAILABLE') return <ErrorMessage error={error} />;
  return (
    <div className="message message-error" role="alert">
      <strong>The hub could not be read right now. The scans of this shop are still under "This shop".</strong>
      <p>{error.message}</p>
      <small className="code">{error.code}</small>
    </div>
  );
}
