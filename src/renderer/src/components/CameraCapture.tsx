/**
 * Webcam capture: pick a camera, a live preview with a frame to fill with the tread and a live check
 * (tread in view, sharp, lit) before Capture is offered, capture a frame as JPEG, retake or analyze.
 */
import { useCallback, useEffect, useId, useRef, useState } from 'react';
import type { CaptureCheck } from '../../../shared/api';
import { UserError } from '../api/errors';
import { useCaptureCheck, type CheckState } from '../hooks/useCaptureCheck';
import { BusyButton } from './BusyButton';
import { CaptureGuide } from './CaptureGuide';
import { ErrorMessage } from './ErrorMessage';

/** What to do about each problem the check finds, in the words of the counter. */
const FIX: Record<CaptureCheck['problems'][number], string> = {
  no_tire: 'No tire in view: point the camera at the tread.',
  tread_not_visible: 'A tire, but not its tread: face the tread and come closer, so that it fills the frame.',
  blurred: 'Not sharp: hold the camera still, about 20 cm from the tread.',
  too_dark: 'Too dark: put a light on the tread.',
  too_bright: 'Too bright: move the light or turn away from the glare.',
};

/** The three things checked, each passed or not; null while no answer has come. */
function checklist(check: CaptureCheck | null): Array<{ label: string; ok: boolean | null }> {
  return [
    {
      label: check?.scene === 'unknown' ? 'Tread in view (not checked)' : 'Tread in view',
      ok: check ? check.scene === 'tread' || check.scene === 'unknown' : null,
    },
    { label: 'Sharp', ok: check ? check.sharpness.ok : null },
    { label: 'Lit', ok: check ? check.brightness.ok : null },
  ];
}

function LiveCheck({ state }: { state: CheckState }) {
  if (state.kind === 'unavailable') {
    return (
      <p className="muted small live-check" data-testid="live-check">
        The live check is not available here: check the photo yourself before analyzing it.
      </p>
    );
  }
  const check = state.kind === 'checked' ? state.check : null;
  const fix = check && !check.ok ? check.problems.map((p) => FIX[p]).filter(Boolean)[0] : null;
  return (
    <div className="live-check" data-testid="live-check">
      <ul aria-label="Live check">
        {checklist(check).map((item) => (
          <li key={item.label} className={item.ok === null ? 'check-wait' : item.ok ? 'check-ok' : 'check-no'}>
            <span aria-hidden="true">{item.ok === null ? '…' : item.ok ? '✓' : '✗'}</span> {item.label}
            <span className="sr-only">{item.ok === null ? ': checking' : item.ok ? ': yes' : ': no'}</span>
          </li>
        ))}
      </ul>
      {/* only the one thing to fix now: the list above changes every second and is not read out */}
      <p className="live-check-fix" role="status">
        {check === null
          ? 'Checking the picture…'
          : !check.ok
            ? fix
            : check.scene === 'unknown'
              ? 'Ready: sharp and lit. Make sure the tread fills the frame, then capture it.'
              : 'Ready: the tread can be read. Capture it.'}
      </p>
    </div>
  );
}

/** Why a camera did not open, and what the person at the counter can do about it. */
export function cameraProblem(error: { name?: string; message?: string }): string {
  switch (error.name) {
    case 'NotFoundError':
    case 'OverconstrainedError':
      return 'No camera was found. Check that the webcam is plugged in (try another USB port), then click "Hide camera" and "Use webcam" again.';
    case 'NotAllowedError':
    case 'SecurityError':
      return "TireWear is not allowed to use the camera. Allow camera access for TireWear in the computer's privacy settings, then try again.";
    case 'NotReadableError':
    case 'AbortError':
      return 'The camera is busy or not working. Close other programs that use it (video calls, another TireWear window), then try again.';
    default:
      return 'The camera could not be opened. Check the cable and close other programs that use the camera, then try again.';
  }
}

interface Props {
  onCapture: (file: File) => void;
  /** The corner the photo goes to, shown above the preview; null when none is left. */
  destination?: string | null;
}

export function CameraCapture({ onCapture, destination = null }: Props) {
  /** A photo went off for analysis: say where its result appears. */
  const [sent, setSent] = useState(false);
  const video = useRef<HTMLVideoElement>(null);
  const analyzeButton = useRef<HTMLButtonElement>(null);
  const captureButton = useRef<HTMLButtonElement>(null);
  const [focusOn, setFocusOn] = useState<'analyze' | 'capture' | null>(null);
  const [devices, setDevices] = useState<MediaDeviceInfo[]>([]);
  /** The camera shown in the picker, and the one asked for (empty: the system's default). */
  const [deviceId, setDeviceId] = useState('');
  const [requestedId, setRequestedId] = useState('');
  const [stream, setStream] = useState<MediaStream | null>(null);
  const [shot, setShot] = useState<{ blob: Blob; url: string } | null>(null);
  /** The preview has a frame to capture (a fresh <video> has none until it loads). */
  const [ready, setReady] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const selectId = useId();
  const check = useCaptureCheck(video, !!stream && ready && !shot);
  const checked = check.kind === 'unavailable' || (check.kind === 'checked' && check.check.ok);

  useEffect(() => {
    if (!navigator.mediaDevices?.getUserMedia) {
      setError(new UserError('This browser gives no access to cameras. Use the TireWear app or a recent Chrome or Edge.'));
      return;
    }
    let active: MediaStream | null = null;
    let cancelled = false;
    navigator.mediaDevices
      .getUserMedia({ video: requestedId ? { deviceId: { exact: requestedId } } : { width: { ideal: 1920 }, height: { ideal: 1080 } } })
      .then(async (media) => {
        if (cancelled) return media.getTracks().forEach((t) => t.stop());
        active = media;
        setStream(media);
        setError(null);
        // Labels are only filled in once permission is granted, so list after getUserMedia.
        const all = await navigator.mediaDevices.enumerateDevices();
        setDevices(all.filter((d) => d.kind === 'videoinput'));
        setDeviceId(media.getVideoTracks()[0]?.getSettings().deviceId ?? requestedId);
      })
      .catch((err: Error) => setError(new UserError(cameraProblem(err))));
    return () => {
      cancelled = true;
      active?.getTracks().forEach((t) => t.stop());
    };
  }, [requestedId]);

  useEffect(() => {
    if (video.current && stream) video.current.srcObject = stream;
  }, [stream, shot]);

  useEffect(
    () => () => {
      if (shot) URL.revokeObjectURL(shot.url);
    },
    [shot],
  );

  const capture = useCallback(() => {
    const v = video.current;
    if (!v || !v.videoWidth) return;
    const canvas = document.createElement('canvas');
    canvas.width = v.videoWidth;
    canvas.height = v.videoHeight;
    canvas.getContext('2d')?.drawImage(v, 0, 0);
    canvas.toBlob(
      (blob) => {
        if (!blob) return;
        setShot({ blob, url: URL.createObjectURL(blob) });
        setFocusOn('analyze');
      },
      'image/jpeg',
      0.92,
    );
    setSent(false);
  }, []);

  const analyze = () => {
    if (!shot) return;
    onCapture(new File([shot.blob], `camera-${new Date().toISOString().replace(/[:.]/g, '-')}.jpg`, { type: 'image/jpeg' }));
    setReady(false);
    setShot(null);
    setSent(true);
    setFocusOn('capture');
  };

  // The button the clerk pressed goes away (Capture → Retake / Analyze → Capture): the focus moves
  // to the next step's button instead of dropping to the page body.
  useEffect(() => {
    if (!focusOn) return;
    (focusOn === 'analyze' ? analyzeButton : captureButton).current?.focus();
    setFocusOn(null);
  }, [focusOn, shot]);

  return (
    <section className="camera" aria-label="Camera capture">
      <div className="row">
        <label htmlFor={selectId}>Camera</label>
        <select
          id={selectId}
          value={deviceId}
          onChange={(e) => {
            setDeviceId(e.target.value);
            setRequestedId(e.target.value);
          }}
          disabled={devices.length === 0}
        >
          {devices.length === 0 && <option value="">Default camera</option>}
          {devices.map((d, i) => (
            <option key={d.deviceId || i} value={d.deviceId}>
              {d.label || `Camera ${i + 1}`}
            </option>
          ))}
        </select>
      </div>
      <ErrorMessage error={error} />
      {destination && (
        <p className="camera-destination">
          This photo goes to: <strong>{destination}</strong>
        </p>
      )}
      <div className="camera-view">
        {shot ? (
          <img src={shot.url} alt="Captured photo" />
        ) : (
          <>
            <video ref={video} autoPlay playsInline muted aria-label="Live camera preview" onLoadedData={() => setReady(true)} />
            {/* the frame to fill: the tread face, edge to edge, as the guide's first picture */}
            <div className="camera-frame" aria-hidden="true">
              <span>Fill this frame with the tread</span>
            </div>
          </>
        )}
      </div>
      {!shot && !error && <LiveCheck state={check} />}
      <p className="muted small" role="status">
        {sent ? 'Photo sent for analysis. Its result appears below the camera.' : ''}
      </p>
      <div className="row">
        {shot ? (
          <>
            <button
              type="button"
              className="secondary"
              onClick={() => {
                setReady(false);
                setShot(null);
                setFocusOn('capture');
              }}
            >
              Retake
            </button>
            <button type="button" ref={analyzeButton} onClick={analyze}>
              Analyze photo
            </button>
          </>
        ) : (
          // focusable while the camera starts, so the focus can wait on it
          <BusyButton type="button" ref={captureButton} onClick={capture} busy={!stream || !ready || !checked}>
            Capture
          </BusyButton>
        )}
      </div>
      <details className="camera-help">
        <summary>How to photograph a tread</summary>
        <CaptureGuide compact />
      </details>
    </section>
  );
}
