import type { WireWear } from '../../../shared/api';
import { WEAR_LABEL, wearColour } from '../lib/format';

/** Wear class in the shop's red / yellow / green. */
export function WearBadge({ wear, large = false }: { wear: WireWear; large?: boolean }) {
  const colour = wearColour(wear);
  return (
    <span className={`badge badge-${colour}${large ? ' badge-large' : ''}`} data-wear={wear} aria-label={`Wear: ${WEAR_LABEL[wear]} (${colour})`}>
      {WEAR_LABEL[wear]}
    </span>
  );
}
