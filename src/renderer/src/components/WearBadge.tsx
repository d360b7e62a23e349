import type { WireWear } from '../../../shared/api';
import { WEAR_LABEL, wearColour } from '../lib/format';

/** Wear class in the shop's red / yellow / green. */
export function WearBadge({ wear, large = false }: { wear: WireWear; large?: boolean }) {
  const colour = wearColour(wear);
  return (
    // the words for a screen reader in hidden text: an aria-label on a plain span is not read
    <span className={`badge badge-${colour}${large ? ' badge-large' : ''}`} data-wear={wear}>
      <span className="sr-only">Wear: </span>
      {WEAR_LABEL[wear]}
      <span className="sr-only"> ({colour})</span>
    </span>
  );
}
