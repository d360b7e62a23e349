/**
 * Past scans by vehicle, newest visit first: search by plate (however typed), filter by wear and
 * date, load more, export CSV.
 * Once this computer is linked to a hub, the chain's scans too ("All shops").
 */
import { useCallback, useEffect, useId, useRef, useState, type SubmitEvent } from 'react';
import type { VehicleGroup, WireScan, WireWear } from '../../../shared/api';
import { MAX_PAGE, MAX_VEHICLE_PAGE } from '../../../shared/contract/limits';
import { api, type ScanFilter } from '../api/client';
import { ErrorMessage } from '../components/ErrorMessage';
import { HubScanList } from '../components/HubScanList';
import { ScanSummary } from '../components/ScanSummary';
import { useSession } from '../hooks/useSession';
import { useSyncStatus } from '../hooks/useSyncStatus';
import { WEARS, WEAR_LABEL, formatDate, formatDay } from '../lib/format';
import { recallHistory, rememberHistory } from '../lib/historyMemory';
import { BusyButton } from '../components/BusyButton';

const PAGE = 20;
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

/** A vehicle's scans split into visits: the scans of one local day, newest first. */
function visitsOf(scans: WireScan[]): Array<{ day: string; scans: WireScan[] }> {
  const visits: Array<{ day: string; scans: WireScan[] }> = [];
  for (const scan of scans) {
    const day = formatDay(scan.createdAt);
    const last = visits[visits.length - 1];
    if (last && last.day === day) last.scans.push(scan);
    else visits.push({ day, scans: [scan] });
  }
  return visits;
}

function countOf(groups: VehicleGroup[]): number {
  return groups.reduce((n, g) => n + g.scans.length, 0);
}

/** This computer's own scans by vehicle (newest visit first), with the filters, detail links and the CSV export. */
function ShopScans() {
  const accountId = useSession().account?.account.id ?? '';
  /** Coming back from a scan opened in this list: the same search, pages and focus. */
  const [back] = useState(() => recallHistory(accountId));
  const [draft, setDraft] = useState<ScanFilter>(back?.draft ?? EMPTY);
  const [filter, setFilter] = useState<ScanFilter>(back?.filter ?? EMPTY);
  const [groups, setGroups] = useState<VehicleGroup[]>(back?.groups ?? []);
  const [cursor, setCursor] = useState<string | null>(back?.cursor ?? null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const opened = useRef<string | null>(back?.opened ?? null);
  const list = useRef<HTMLOListElement>(null);
  const ids = { vehicle: useId(), wear: useId(), from: useId(), to: useId() };

  const load = useCallback(async (f: ScanFilter, after: string | null, size = PAGE) => {
    setLoading(true);
    setError(null);
    try {
      const page = await api.listVehicles(f, after ?? undefined, size);
      setGroups((old) => (after ? [...old, ...page.items] : page.items));
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
    // Back from a scan: read again as many vehicles as were loaded (one was perhaps deleted), up to
    // the server's largest page of vehicles, then focus the scan opened.
    const size = back && filter === back.filter ? Math.min(MAX_VEHICLE_PAGE, Math.max(PAGE, back.groups.length)) : PAGE;
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
    rememberHistory({ accountId, draft, filter, groups, cursor, opened: opened.current });
  }, [accountId, draft, filter, groups, cursor]);

  /** The next page; the first scan of it takes the focus, where reading goes on (the button is gone after the last page). */
  const loadMore = async (after: string) => {
    const first = countOf(groups);
    const loaded = await load(filter, after);
    if (!loaded || loaded.length === 0) return;
    requestAnimationFrame(() => list.current?.querySelectorAll<HTMLElement>('a.history-item')[first]?.focus());
  };

  /** Every scan of one vehicle, not only its newest: the first of those not shown before takes the focus. */
  const showAll = async (group: VehicleGroup) => {
    const shown = group.scans.length;
    setError(null);
    try {
      const all: WireScan[] = [];
      let after: string | undefined;
      const only: ScanFilter = { ...filter, vehicle: '', ...(group.vehicleKey ? { vehicleKey: group.vehicleKey } : { hasVehicle: false }) };
      do {
        const page = await api.listScans(only, after, MAX_PAGE);
        all.push(...page.items);
        after = page.nextCursor ?? undefined;
      } while (after && all.length < 1000);
      setGroups((old) => old.map((g) => (g === group ? { ...g, scans: all } : g)));
      requestAnimationFrame(() => {
        const box = list.current?.querySelector<HTMLElement>(`[data-vehicle-key="${CSS.escape(group.vehicleKey ?? '')}"]`);
        box?.querySelectorAll<HTMLElement>('a.history-item')[shown]?.focus();
      });
    } catch (err) {
      setError(err);
    }
  };

  const apply = (event: SubmitEvent) => {
    event.preventDefault();
    setFilter({ ...draft });
  };
  const shownScans = countOf(groups);
  const remember = (scanId: string) => rememberHistory({ accountId, draft, filter, groups, cursor, opened: scanId });

  return (
    <>
      <form className="filters" onSubmit={apply} role="search">
        <div className="field">
          <label htmlFor={ids.vehicle}>Vehicle / plate</label>
          <input id={ids.vehicle} type="search" value={draft.vehicle} onChange={(e) => setDraft({ ...draft, vehicle: e.target.value })} />
        </div>
        <div className="field">
          {/* the server filters on the depth of record, as a row's badge shows it: the gauge's band where there is a reading */}
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
        </div>
        <p className="muted small filters-note">Plates are found however they were typed: spaces, dashes and capitals do not matter.</p>
      </form>
      <ErrorMessage error={error} />
      {!loading && !error && groups.length === 0 && <p className="empty">No scans match. Scans you make while signed in appear here.</p>}
      {/* always present, so a search's outcome is announced (a region added with its text often is not) */}
      <p className="sr-only" aria-live="polite" data-testid="history-status">
        {loading || error
          ? ''
          : groups.length === 0
            ? 'No scans match the search.'
            : `${shownScans} ${shownScans === 1 ? 'scan' : 'scans'} of ${groups.length} ${groups.length === 1 ? 'vehicle' : 'vehicles'} shown${cursor ? ', more can be loaded' : ''}.`}
      </p>
      <ol className="vehicle-groups" ref={list}>
        {groups.map((group) => (
          <li key={group.vehicleKey ?? ''} className="vehicle-group" data-vehicle-key={group.vehicleKey ?? ''}>
            <div className="vehicle-group-head">
              <h3>{group.vehicle ?? 'No vehicle'}</h3>
              <span className="muted">
                {group.scanCount} {group.scanCount === 1 ? 'scan' : 'scans'} · last {formatDate(group.lastScanAt)}
              </span>
              {group.vehicle && (
                <a className="button secondary" href={`#/report?vehicle=${encodeURIComponent(group.vehicle)}`}>
                  Report for {group.vehicle}
                </a>
              )}
            </div>
            {visitsOf(group.scans).map((visit) => (
              <section key={visit.day} className="visit" aria-label={`${group.vehicle ?? 'No vehicle'}, ${visit.day}`}>
                <h4 className="visit-day">{visit.day}</h4>
                <ul className="history-list">
                  {visit.scans.map((scan) => (
                    <li key={scan.scanId}>
                      <a
                        href={`#/history/${encodeURIComponent(scan.scanId)}`}
                        className="history-item"
                        data-scan-id={scan.scanId}
                        onClick={() => remember(scan.scanId)}
                      >
                        <ScanSummary scan={scan} thumbnailUrl={scan.image.thumbnailUrl || api.imageUrl(scan.scanId, 'thumbnail')} />
                      </a>
                    </li>
                  ))}
                </ul>
              </section>
            ))}
            {group.scanCount > group.scans.length && (
              <button type="button" className="link" onClick={() => void showAll(group)}>
                Show all {group.scanCount} scans of {group.vehicle ?? 'no vehicle'}
              </button>
            )}
          </li>
        ))}
      </ol>
      {cursor && (
        <BusyButton type="button" className="secondary load-more" busy={loading} onClick={() => void loadMore(cursor)}>
          {loading ? 'Loading…' : 'Load more'}
        </BusyButton>
      )}
    </>
  );
}
