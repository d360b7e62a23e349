import { useEffect, useState } from 'react';

/** Copies text; falls back to selecting it where the clipboard API is not allowed. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
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
    <button type="button" className="secondary" onClick={() => void copy()} aria-live="polite">
      {copied ? 'Copied' : label}
    </button>
  );
}
