/** The counter's status line for screen readers: photos added, and each photo once it is finished. */
import { useEffect, useRef, useState } from 'react';
import { POSITION_LABEL, WEAR_LABEL, formatIn, type Units } from '../lib/format';
import type { QueueItem } from '../lib/queueItems';
import { depthOfRecord } from '../lib/record';

/** One short line for screen readers about a photo that has just finished, instead of re-reading whole cards. */
function finishedLine(item: QueueItem, units: Units): string {
  if (item.status === 'failed') return `${item.name} failed.`;
  if (!item.view) return '';
  const record = depthOfRecord(item.view);
  return `${item.name}: ${WEAR_LABEL[record.wear]}, ${formatIn(record.mm, units)}.`;
}

function addedLine(added: QueueItem[]): string {
  const where = (item: QueueItem) => (item.position ? ` to ${POSITION_LABEL[item.position].toLowerCase()}` : '');
  if (added.length === 1) return `${added[0]!.name} added${where(added[0]!)}, analyzing.`;
  const corners = added.flatMap((item) => (item.position ? [POSITION_LABEL[item.position].toLowerCase()] : []));
  return `${added.length} photos added${corners.length ? ` to ${corners.join(', ')}` : ''}, analyzing.`;
}

/**
 * What the status line says: photos added (so a drop is not silent until the first result) and each
 * photo as it finishes, once. Only news: hiding a card never announces an older result again.
 */
export function useQueueAnnouncement(items: QueueItem[], units: Units): string {
  const [line, setLine] = useState('');
  const seen = useRef(new Set<number>());
  const finished = useRef(new Set<number>());
  useEffect(() => {
    const added = items.filter((item) => !seen.current.has(item.id));
    added.forEach((item) => seen.current.add(item.id));
    const done = items.filter((item) => (item.status === 'done' || item.status === 'failed') && !finished.current.has(item.id));
    done.forEach((item) => finished.current.add(item.id));
    const news = [
      ...(added.length > 0 && done.length < added.length ? [addedLine(added)] : []),
      ...done.map((item) => finishedLine(item, units)).filter(Boolean),
    ];
    if (news.length > 0) setLine(news.join(' '));
  }, [items, units]);
  return line;
}
