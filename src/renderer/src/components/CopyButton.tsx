import { useEffect, useState } from 'react';

/** Copies text; falls back to selecting it where the clipboard API is not allowed. */
/** `name`: the accessible name where several buttons show the same label (e.g. "Copy http://127.0.0.1:8787"). */
export function CopyButton({ text, label = 'Copy', name }: { text: string; label?: string; name?: string }) {
  const [copied, setCopied] = useState(false);
  // New text (a second key created): not copied yet.
  useEffect(() => setCopied(false), [text]);
  async function copy() {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
    } catch {
      window.prompt('Copy with Ctrl+C:', text);
    }
  }
  return (
    <button type="button" className="secondary" onClick={() => void copy()} aria-live="polite" aria-label={name && !copied ? name : undefined}>
      {copied ? 'Copied' : label}
    </button>
  );
}
