/**
 * The customer's page: one vehicle's tires, printable on one sheet. Signed-in shops reach
 * it from the history (#/report?vehicle=...); the scan screen passes its fresh results.
 */
import { useEffect, useState } from 'react';
import type { WireScan } from '../../../shared/api';
import { vehicleKey } from '../../../shared/vehicle';
import { api } from '../api/client';
import { ErrorMessage } from '../components/ErrorMessage';
import { WearBadge } from '../components/WearBadge';
import { useSession } from '../hooks/useSession';
import { bridge } from '../lib/bridge';
import { POSITIONS, POSITION_LABEL, WEAR_ADVICE, colourLegend, formatDay, formatDepth, formatIn, formatRange, legalMinimumMm } from '../lib/format';
import { depthOfRecord } from '../lib/record';
import { fromWireScan, type ScanView } from '../lib/scanView';

/** Newest scan per position, in FL FR RL RR SPARE order, then unpositioned ones. */
export function pickTires(scans: ScanView[]): ScanView[] {
  const sorted = [...scans].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  const byPosition = POSITIONS.flatMap((p) => sorted.filter((s) => s.position === p).slice(0, 1));
  return [...byPosition, ...sorted.filter((s) => s.position === null)].slice(0, 6);
}

/**
 * The server matches part of the plate (however typed); the report is for one car: the newest
 * matching scan's vehicle, by its plate key ("KA TW 204" and "ka-tw-204" are one car).
 */
function oneVehicle(items: WireScan[], query: string): WireScan[] {
  const q = vehicleKey(query);
  const newest = items.find((s) => (q ? s.vehicleKey?.includes(q) : s.vehicle?.toLowerCase().includes(query.trim().toLowerCase())));
  const key = newest?.vehicleKey;
  return key ? items.filter((s) => s.vehicleKey === key) : [];
}

export function ReportPage({ vehicle, sessionScans }: { vehicle: string | null; sessionScans: ScanView[] }) {
  const { prefs } = useSession();
  const [scans, setScans] = useState<ScanView[] | null>(vehicle ? null : sessionScans);
  const [error, setError] = useState<unknown>(null);
  const [pdfNote, setPdfNote] = useState<string | null>(null);

  useEffect(() => {
    if (!vehicle) return;
    api
      .listScans({ vehicle }, undefined, 50)
      .then((list) => setScans(oneVehicle(list.items, vehicle).map(fromWireScan)))
      .catch(setError);
  }, [vehicle]);

  const tires = pickTires(scans ?? []);
  const plate = tires.find((t) => t.vehicle)?.vehicle ?? vehicle ?? '';
  const latest = tires.reduce<string | null>((acc, t) => (acc && acc > t.createdAt ? acc : t.createdAt), null);
  const legal = legalMinimumMm(prefs.legalMinimum);
  const desktop = bridge();

  async function savePdf() {
    if (!desktop) return;
    try {
      const day = new Date().toISOString().slice(0, 10);
      const result = await desktop.printToPDF({ fileName: `tire-report-${plate || 'vehicle'}-${day}.pdf` });
      setPdfNote(result.saved ? `PDF saved to ${result.path}` : null);
    } catch (err) {
      setError(err);
    }
  }

  return (
    <section className="report-page" aria-labelledby="report-title">
      <div className="toolbar no-print">
        <a href={vehicle ? '#/history' : '#/scan'} className="button secondary">
          Back
        </a>
        <button type="button" onClick={() => window.print()} disabled={tires.length === 0}>
          Print report
        </button>
        {desktop && (
          <button type="button" className="secondary" onClick={savePdf} disabled={tires.length === 0}>
            Save as PDF
          </button>
        )}
        {pdfNote && <span role="status">{pdfNote}</span>}
      </div>
      <ErrorMessage error={error} />
      <article className="report" data-testid="report">
        <header className="report-head">
          <div>
            <h2 id="report-title">{prefs.shopName || 'Tire tread report'}</h2>
            <div>
              Tread depth report
              {plate && (
                <>
                  {' '}
                  for <strong>{plate}</strong>
                </>
              )}
            </div>
          </div>
          <div className="report-date">{formatDay(latest ?? new Date())}</div>
        </header>
        {scans === null && !error && <p>Loading…</p>}
        {scans !== null && tires.length === 0 && <p>No scans for this vehicle yet.</p>}
        <div className="report-grid">
          {tires.map((t) => {
            const record = depthOfRecord(t);
            return (
              <div className="report-tire" key={t.scanId}>
                <img src={t.imageSrc} alt={`Photo of ${t.position ? POSITION_LABEL[t.position] : 'tire'}`} />
                <div className="report-tire-body">
                  <div className="report-position">{t.position ? POSITION_LABEL[t.position] : 'Tire'}</div>
                  <WearBadge wear={record.wear} />
                  <div className="report-depth">{formatDepth(record.mm, prefs.units)}</div>
                  <div className="small">
                    {record.source === 'gauge' ? (
                      <>Measured with a gauge · photo estimate {formatIn(t.result.estimatedDepthMm, prefs.units)}</>
                    ) : (
                      <>likely {formatRange(t.result.depthRangeMm.min, t.result.depthRangeMm.max, prefs.units)}</>
                    )}
                  </div>
                  <div className="small">{WEAR_ADVICE[record.wear]}</div>
                  {record.isPreliminary && <div className="small warn-text">Preliminary: confirm with a gauge.</div>}
                </div>
              </div>
            );
          })}
        </div>
        <footer className="report-foot">
          <p data-testid="legend">{colourLegend(prefs.units, legal)}</p>
          <p className="disclaimer">{tires[0]?.result.disclaimer ?? ''}</p>
        </footer>
      </article>
    </section>
  );
}
