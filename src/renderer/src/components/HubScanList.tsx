/**
 * The chain's scans as the hub holds them, every linked shop's, read through this
 * computer (the hub key never reaches the window). Each names the shop it came from,
 * and a select narrows the list to one shop. Read-only: a gauge reading or a deletion
 * belongs to the shop that made the scan.
 */
import { useCallback, useEffect, useId, useRef, useState } from 'react';
import type { HubScan, WireShop } from '../../../shared/api';
import { ApiError, api } from '../api/client';
import { ErrorMessage } from './ErrorMessage';
import { ScanSummary } from './ScanSummary';
import { BusyButton } from './BusyButton';

const PAGE = 20;

/** "Main St", "Main St (key deleted)"; a scan made on the hub itself has no shop. */
export function shopLabel(shop: WireShop | null): string {
  if (!shop) return 'Made on the hub';
  const name = shop.name ?? 'Unknown shop';
  return shop.deleted ? `${name} (key deleted)` : name;
}

export function HubScanList({ hubUrl }: { hubUrl: string | null }) {
  const [items, setItems] = useState<HubScan[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [shops, setShops] = useState<WireShop[]>([]);
  const [shopId, setShopId] = useState('');
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const selectId = useId();
  // A page that answers after the shop changed belongs to the old list: drop it.
  const latest = useRef(0);

  const load = useCallback(async (after: string | null, apiKeyId: string) => {
    const request = ++latest.current;
    setLoading(true);
    setError(null);
    try {
      const page = await api.hubScans(after ?? undefined, PAGE, apiKeyId || undefined);
      if (request !== latest.current) return;
      setItems((old) => (after ? [...old, ...page.items] : page.items));
      setCursor(page.nextCursor);
    } catch (err) {
      if (request === latest.current) setError(err);
    } finally {
      if (request === latest.current) setLoading(false);
    }
  }, []);

  const loadShops = useCallback(async () => {
    try {
      setShops(await api.hubShops());
    } catch {
      // The scans' own request tells what is wrong with the hub; without shops there is no filter.
      setShops([]);
    }
  }, []);

  useEffect(() => {
    void load(null, shopId);
  }, [load, shopId]);

  useEffect(() => {
    void loadShops();
  }, [loadShops]);

  const refresh = () => {
    void loadShops();
    void load(null, shopId);
  };

  return (
    <div className="hub-scans">
      <div className="toolbar">
        <p className="muted">
          Scans of every shop linked to {hubUrl ?? 'the hub'}, newest first. Read-only here: gauge readings and deletions are made at the shop that took the
          scan.
        </p>
        {shops.length > 0 && (
          <div className="field">
            <label htmlFor={selectId}>Shop</label>
            <select id={selectId} value={shopId} onChange={(e) => setShopId(e.target.value)}>
              <option value="">All shops</option>
              {shops.map((shop) => (
                <option key={shop.apiKeyId} value={shop.apiKeyId}>
                  {shopLabel(shop)}
                </option>
              ))}
            </select>
          </div>
        )}
        <BusyButton type="button" className="secondary" busy={loading} onClick={refresh}>
          Refresh
        </BusyButton>
      </div>
      <HubError error={error} />
      {!loading && !error && items.length === 0 && (
        <p className="empty">{shopId ? 'This shop has no scans on the hub yet.' : 'The hub has no scans yet. Scans appear here once a shop has synced.'}</p>
      )}
      <ul className="history-list">
        {items.map((scan) => (
          <li key={scan.scanId} className="history-item hub-item">
            <ScanSummary scan={scan} thumbnailUrl={scan.image.thumbnailUrl}>
              <div className="muted hub-shop" data-testid="hub-shop">
                {shopLabel(scan.shop)}
              </div>
            </ScanSummary>
          </li>
        ))}
      </ul>
      {cursor && (
        <BusyButton type="button" className="secondary load-more" busy={loading} onClick={() => void load(cursor, shopId)}>
          {loading ? 'Loading…' : 'Load more'}
        </BusyButton>
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
