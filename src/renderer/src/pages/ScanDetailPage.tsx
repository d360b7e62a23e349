/** One scan from the history: the full card, gauge reading, delete, report for its vehicle. */
import { useEffect, useState } from 'react';
import { api } from '../api/client';
import { ErrorMessage } from '../components/ErrorMessage';
import { ResultCard } from '../components/ResultCard';
import { navigate } from '../hooks/useRoute';
import { fromWireScan, type ScanView } from '../lib/scanView';

export function ScanDetailPage({ scanId }: { scanId: string }) {
  const [scan, setScan] = useState<ScanView | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [confirming, setConfirming] = useState(false);

  useEffect(() => {
    setScan(null);
    api.getScan(scanId).then((s) => setScan(fromWireScan(s)), setError);
  }, [scanId]);

  async function remove() {
    try {
      await api.deleteScan(scanId);
      navigate('/history');
    } catch (err) {
      setError(err);
    }
  }

  return (
    <section aria-labelledby="detail-title">
      <div className="toolbar">
        <a href="#/history" className="button secondary">
          Back to history
        </a>
      </div>
      <h2 id="detail-title">Scan details</h2>
      <ErrorMessage error={error} />
      {!scan && !error && <p>Loading…</p>}
      {scan && (
        <ResultCard
          scan={scan}
          onMeasured={(mm) => setScan({ ...scan, measurementMm: mm })}
          actions={
            <>
              {scan.vehicle && (
                <a className="button secondary" href={`#/report?vehicle=${encodeURIComponent(scan.vehicle)}`}>
                  Customer report
                </a>
              )}
              {confirming ? (
                <>
                  <span>Delete this scan for good?</span>
                  <button type="button" className="danger" onClick={() => void remove()}>
                    Yes, delete
                  </button>
                  <button type="button" className="secondary" onClick={() => setConfirming(false)}>
                    Cancel
                  </button>
                </>
              ) : (
                <button type="button" className="danger" onClick={() => setConfirming(true)}>
                  Delete scan
                </button>
              )}
            </>
          }
        />
      )}
    </section>
  );
}
