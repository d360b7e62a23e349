/** One scan from the history: the full card, gauge reading, delete, report for its vehicle. */
import { useEffect, useId, useRef, useState } from 'react';
import { api } from '../api/client';
import { ErrorMessage } from '../components/ErrorMessage';
import { ResultCard } from '../components/ResultCard';
import { navigate } from '../hooks/useRoute';
import { fromWireScan, type ScanView } from '../lib/scanView';

export function ScanDetailPage({ scanId }: { scanId: string }) {
  const [scan, setScan] = useState<ScanView | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [confirming, setConfirming] = useState(false);
  const questionId = useId();
  const deleteButton = useRef<HTMLButtonElement>(null);
  /** Set by Cancel: focus returns to "Delete scan" once it is back on the page. */
  const backToDelete = useRef(false);

  useEffect(() => {
    if (confirming || !backToDelete.current) return;
    backToDelete.current = false;
    deleteButton.current?.focus();
  }, [confirming]);

  useEffect(() => {
    setScan(null);
    api.getScan(scanId).then((s) => setScan(fromWireScan(s)), setError);
  }, [scanId]);

  function cancel() {
    backToDelete.current = true;
    setConfirming(false);
  }

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
          onMeasured={(mm) => {
            setScan({ ...scan, measurementMm: mm });
            // the reading is in the scan's corrections now: read them again
            api.getScan(scanId).then(
              (fresh) => setScan(fromWireScan(fresh)),
              () => undefined,
            );
          }}
          onCorrected={(fresh) => setScan(fromWireScan(fresh))}
          loadOverlays={() => api.scanOverlays(scanId)}
          actions={
            <>
              {scan.vehicle && (
                <a className="button secondary" href={`#/report?vehicle=${encodeURIComponent(scan.vehicle)}`}>
                  Customer report
                </a>
              )}
              {confirming ? (
                // the question names the group, so a screen reader reads it with "Yes, delete"; Escape cancels
                <div
                  className="row confirm-delete"
                  role="group"
                  aria-labelledby={questionId}
                  onKeyDown={(event) => {
                    if (event.key !== 'Escape') return;
                    event.preventDefault();
                    cancel();
                  }}
                >
                  <span id={questionId}>Delete this scan for good?</span>
                  {/* Focus moves to the choice the question asks for. */}
                  <button type="button" className="danger" autoFocus onClick={() => void remove()}>
                    Yes, delete
                  </button>
                  <button type="button" className="secondary" onClick={cancel}>
                    Cancel
                  </button>
                </div>
              ) : (
                <button ref={deleteButton} type="button" className="danger" onClick={() => setConfirming(true)}>
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
