/**
 * A button that is unavailable while its action runs (or until it can be used) without losing the
 * keyboard's place: a focused button that becomes `disabled` drops focus to the page body in
 * Chromium, so the next Tab starts over and a screen reader loses its place. This one stays
 * focusable, says it is unavailable (`aria-disabled`) and ignores clicks meanwhile; for a submit
 * button that also stops Enter in the form's fields, which submits through its click.
 */
import type { ButtonHTMLAttributes, MouseEvent, Ref } from 'react';

export function BusyButton({ busy, onClick, ...props }: ButtonHTMLAttributes<HTMLButtonElement> & { busy: boolean; ref?: Ref<HTMLButtonElement> }) {
  return (
    <button
      {...props}
      aria-disabled={busy || undefined}
      onClick={(event: MouseEvent<HTMLButtonElement>) => {
        if (busy) {
          event.preventDefault();
          return;
        }
        onClick?.(event);
      }}
    />
  );
}
