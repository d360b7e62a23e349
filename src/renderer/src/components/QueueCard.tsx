/** One photo in the scan queue: progress while it uploads, then its result or its error. */
import type { WireScan } from '../../../shared/api';
import { ApiError } from '../api/client';
import { canRetry, type QueueItem } from '../lib/queueItems';
import { CaptureGuide, GUIDED_CODES } from './CaptureGuide';
import { POSITION_LABEL } from '../lib/format';
import { ErrorMessage } from './ErrorMessage';
import { ResultCard } from './ResultCard';

interface Props {
  item: QueueItem;
  /** The window is signed in now (a demo limit met before signing in no longer applies). */
  signedIn: boolean;
  onRemove: () => void;
  onRetry: () => void;
  onMeasured: (measurementMm: number | null) => void;
  onCorrected: (scan: WireScan) => void;
}

const STATUS_TEXT = {
  queued: 'Waiting…',
  held: 'Waiting for you to sign in again',
  uploading: 'Uploading…',
  analyzing: 'Analyzing…',
  done: 'Done',
  failed: 'Failed',
};

export function QueueCard({ item, signedIn, onRemove, onRetry, onMeasured, onCorrected }: Props) {
  if (item.status === 'done' && item.view) {
    return (
      <ResultCard
        scan={item.view}
        queueId={item.id}
        onMeasured={onMeasured}
        onCorrected={onCorrected}
        actions={
          <button type="button" className="secondary" onClick={onRemove}>
            Hide card
          </button>
        }
      />
    );
  }
  const percent = Math.round(item.progress * 100);
  const busy = item.status === 'queued' || item.status === 'uploading' || item.status === 'analyzing';
  return (
    <article
      className={`queue-card queue-${item.status}`}
      aria-label={`Photo ${item.name}: ${STATUS_TEXT[item.status]}`}
      aria-busy={busy}
      data-queue-id={item.id}
      tabIndex={-1}
    >
      {item.localUrl ? (
        <img src={item.localUrl} alt={`Photo ${item.name}`} className="queue-thumb" />
      ) : (
        <div className="queue-thumb queue-thumb-file" aria-hidden="true">
          Not a photo
        </div>
      )}
      <div className="queue-body">
        <h3>{item.name}</h3>
        <div className="muted">{[item.vehicle, item.position ? POSITION_LABEL[item.position] : ''].filter(Boolean).join(' · ')}</div>
        <p className="queue-status">{STATUS_TEXT[item.status]}</p>
        {busy && (
          <progress
            max={100}
            value={item.status === 'analyzing' ? undefined : percent}
            aria-label={item.status === 'analyzing' ? 'Analyzing' : `Upload ${percent}%`}
          />
        )}
        {item.status === 'held' && <p className="muted">This photo is kept. It is analyzed into your shop's history as soon as you have signed in again.</p>}
        {item.status === 'failed' && (
          <>
            {signedIn && !item.failedSignedIn && item.error instanceof ApiError && item.error.code === 'RATE_LIMIT_EXCEEDED' ? (
              <p className="message message-ok">
                The demo's daily limit stopped this photo. You are signed in now: press Try again to analyze it for your shop.
              </p>
            ) : (
              <ErrorMessage error={item.error} />
            )}
            {item.error instanceof ApiError && GUIDED_CODES.has(item.error.code) && <CaptureGuide />}
            <div className="card-actions">
              {canRetry(item) && (
                <button type="button" onClick={onRetry}>
                  Try again
                </button>
              )}
              <button type="button" className={canRetry(item) ? 'secondary' : undefined} onClick={onRemove}>
                Remove
              </button>
            </div>
          </>
        )}
      </div>
    </article>
  );
}
