/** One photo in the scan queue: progress while it uploads, then its result or its error. */
import type { QueueItem } from '../hooks/useScanQueue';
import { ErrorMessage } from './ErrorMessage';
import { ResultCard } from './ResultCard';

interface Props {
  item: QueueItem;
  onRemove: () => void;
  onRetry: () => void;
  onMeasured: (measurementMm: number | null) => void;
}

const STATUS_TEXT = { queued: 'Waiting…', uploading: 'Uploading…', analyzing: 'Analyzing…', done: 'Done', failed: 'Failed' };

export function QueueCard({ item, onRemove, onRetry, onMeasured }: Props) {
  if (item.status === 'done' && item.view) {
    return (
      <ResultCard
        scan={item.view}
        onMeasured={onMeasured}
        actions={
          <button type="button" className="secondary" onClick={onRemove}>
            Hide card
          </button>
        }
      />
    );
  }
  const percent = Math.round(item.progress * 100);
  return (
    <article className={`queue-card queue-${item.status}`} aria-label={`Photo ${item.name}: ${STATUS_TEXT[item.status]}`} aria-busy={item.status !== 'failed'}>
      <img src={item.localUrl} alt={`Photo ${item.name}`} className="queue-thumb" />
      <div className="queue-body">
        <h3>{item.name}</h3>
        <div className="muted">{[item.vehicle, item.position].filter(Boolean).join(' · ')}</div>
        <p className="queue-status">{STATUS_TEXT[item.status]}</p>
        {item.status !== 'failed' && (
          <progress
            max={100}
            value={item.status === 'analyzing' ? undefined : percent}
            aria-label={item.status === 'analyzing' ? 'Analyzing' : `Upload ${percent}%`}
          />
        )}
        {item.status === 'failed' && (
          <>
            <ErrorMessage error={item.error} />
            <div className="card-actions">
              <button type="button" onClick={onRetry}>
                Try again
              </button>
              <button type="button" className="secondary" onClick={onRemove}>
                Remove
              </button>
            </div>
          </>
        )}
      </div>
    </article>
  );
}
