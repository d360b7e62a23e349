/** A big target for photos: drop, click / Enter to pick files, or paste from the clipboard. */
import { useEffect, useRef, useState, type DragEvent, type KeyboardEvent } from 'react';

/** Every file, photos or not: one that is not a photo gets its own card saying so, instead of vanishing. */
function filesOf(files: FileList | null | undefined): File[] {
  return Array.from(files ?? []);
}

interface Props {
  onFiles: (files: File[]) => void;
  listenToPaste: boolean;
  /** One line high once results are on screen: they matter more than the target. */
  compact: boolean;
}

export function DropZone({ onFiles, listenToPaste, compact }: Props) {
  const input = useRef<HTMLInputElement>(null);
  const [over, setOver] = useState(false);

  useEffect(() => {
    if (!listenToPaste) return;
    const onPaste = (event: ClipboardEvent) => {
      const target = event.target as HTMLElement | null;
      if (target && (target.tagName === 'INPUT' || target.tagName === 'TEXTAREA')) return;
      const files = filesOf(event.clipboardData?.files);
      if (files.length) {
        event.preventDefault();
        onFiles(files.map((f, i) => (f.name && f.name !== 'image.png' ? f : new File([f], `pasted-${Date.now()}-${i}.png`, { type: f.type }))));
      }
    };
    window.addEventListener('paste', onPaste);
    return () => window.removeEventListener('paste', onPaste);
  }, [onFiles, listenToPaste]);

  const onDrop = (event: DragEvent) => {
    event.preventDefault();
    setOver(false);
    const files = filesOf(event.dataTransfer.files);
    if (files.length) onFiles(files);
  };
  const onKey = (event: KeyboardEvent) => {
    if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      input.current?.click();
    }
  };

  return (
    <div
      className={`drop-zone${over ? ' drop-over' : ''}${compact ? ' drop-compact' : ''}`}
      role="button"
      tabIndex={0}
      aria-label="Drop tire photos here, or press Enter to choose files, or paste with Ctrl+V"
      data-testid="drop-zone"
      onClick={() => input.current?.click()}
      onKeyDown={onKey}
      onDragOver={(e) => {
        e.preventDefault();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={onDrop}
    >
      <div className="drop-icon" aria-hidden="true">
        ⬇
      </div>
      <div className="drop-title">Drop tire photos here</div>
      <div className="muted">or click to choose files · paste with Ctrl+V · JPEG, PNG or WebP up to 10 MB</div>
      {!compact && (
        // The models read close-ups of the tread face best and whole-wheel shots worst (models/README.md).
        <div className="muted small drop-tip">
          Several photos fill the corners in order. Best reading: the tread face filling the photo, from about 20 cm, across all grooves.
        </div>
      )}
      <input
        ref={input}
        type="file"
        accept="image/jpeg,image/png,image/webp"
        multiple
        hidden
        data-testid="file-input"
        onChange={(e) => {
          const files = filesOf(e.target.files);
          e.target.value = '';
          if (files.length) onFiles(files);
        }}
      />
    </div>
  );
}
