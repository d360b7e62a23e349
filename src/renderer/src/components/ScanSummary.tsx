/**
 * One line of a scan list: thumbnail, vehicle and position, date, depth, wear (and what a list adds,
 * as children). Its text is the row's accessible name too: vehicle, position, date, depth, gauge, wear.
 */
import type { ReactNode } from 'react';
import type { WireScan } from '../../../shared/api';
import { useSession } from '../hooks/useSession';
import { POSITION_LABEL, formatDate, formatDepth, formatIn } from '../lib/format';
import { depthOfRecord } from '../lib/record';
import { WearBadge } from './WearBadge';

/** What a line shows: the fields every scan has, a hub's too (HubScan: issue 42's fields may be missing from an older hub). */
type ScanLine = Pick<WireScan, 'vehicle' | 'position' | 'createdAt' | 'result' | 'measurementMm'>;

export function ScanSummary({ scan, thumbnailUrl, children }: { scan: ScanLine; thumbnailUrl: string; children?: ReactNode }) {
  const { prefs } = useSession();
  const record = depthOfRecord(scan);
  return (
    <>
      <img src={thumbnailUrl} alt="" loading="lazy" />
      <div className="history-text">
        <div className="history-title">
          {scan.vehicle ?? 'No vehicle'}
          {scan.position && <span className="muted"> · {POSITION_LABEL[scan.position]}</span>}
        </div>
        <div className="muted">{formatDate(scan.createdAt)}</div>
        {/* the gauge, where there is one, is the depth of record: first, and its colour on the badge */}
        <div>
          {record.source === 'gauge' ? (
            <>
              gauge {formatDepth(record.mm, prefs.units)}
              <span className="muted"> · photo {formatIn(scan.result.estimatedDepthMm, prefs.units)}</span>
            </>
          ) : (
            formatDepth(record.mm, prefs.units)
          )}
        </div>
        {children}
      </div>
      <WearBadge wear={record.wear} />
    </>
  );
}
