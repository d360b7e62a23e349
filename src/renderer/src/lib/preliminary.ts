/**
 * Why a result is preliminary, in the counter's words (docs/API.md §2 `preliminaryReasons`). A
 * scan stored before the reasons were written has none: its sentence is inferred from the
 * alignment as before (under 70: the models disagree; otherwise one of the other reasons, which
 * such a result does not tell apart).
 */
import type { WireResult } from '../../../shared/api';

const SENTENCES: Record<string, (r: WireResult) => string> = {
  models_disagree: (r) => `The models disagree (alignment ${r.modelAlignment}%).`,
  tread_barely_visible: () => 'Little of the photo shows tread the models can read.',
  unlike_training_photos: () => 'It is a kind of photo the models did not learn wear from, such as a close-up of the tread.',
  unlike_shop_photos: () => "It is unlike the photos your shop's own reader learned from (your gauge readings).",
};

export function preliminarySentences(r: WireResult): string[] {
  const known = (r.preliminaryReasons ?? []).filter((reason) => Object.hasOwn(SENTENCES, reason));
  if (known.length > 0) return known.map((reason) => SENTENCES[reason]!(r));
  return [
    r.modelAlignment < 70
      ? SENTENCES.models_disagree!(r)
      : 'The models cannot read this photo well: little of it shows tread, or it is a kind of photo they did not learn wear from.',
  ];
}
