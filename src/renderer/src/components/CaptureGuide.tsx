/**
 * How to photograph a tread, drawn: face-on, close, in light, and the shots the models cannot
 * read (the side of a wheel, the whole car, a blurred or dark one). Shown with a photo refused as
 * NO_TIRE_DETECTED, TREAD_NOT_VISIBLE or too small; the pictures are inline SVG so that they print,
 * scale to a 320 px window and need no file.
 */
import { useId } from 'react';

/** Codes whose photo a better-taken one can mend: the card then shows the guide. */
export const GUIDED_CODES: ReadonlySet<string> = new Set(['NO_TIRE_DETECTED', 'TREAD_NOT_VISIBLE', 'IMAGE_TOO_SMALL']);

/** A tread face: dark rubber blocks between main grooves, with sipes. */
function Tread({ x, y, w, h, lit = false }: { x: number; y: number; w: number; h: number; lit?: boolean }) {
  const grooves = [0.22, 0.5, 0.78].map((f) => x + w * f);
  const rows = Array.from({ length: 6 }, (_, i) => y + (h / 6) * (i + 0.5));
  return (
    <g>
      <rect x={x} y={y} width={w} height={h} rx={6} fill={lit ? '#4a505a' : '#2b2f36'} />
      {grooves.map((gx) => (
        <rect key={gx} x={gx - 5} y={y} width={10} height={h} fill="#0d0f12" />
      ))}
      {rows.map((ry) => (
        <g key={ry} stroke={lit ? '#8a929e' : '#5a616c'} strokeWidth={2}>
          <path d={`M${x + 6} ${ry} l${w * 0.14} -6`} />
          <path d={`M${x + w * 0.3} ${ry} l${w * 0.14} 6`} />
          <path d={`M${x + w * 0.58} ${ry} l${w * 0.14} -6`} />
          <path d={`M${x + w * 0.84} ${ry} l${w * 0.12} 6`} />
        </g>
      ))}
    </g>
  );
}

function Tick() {
  return (
    <g>
      <circle cx={178} cy={22} r={16} fill="#1b7f3b" />
      <path d="M170 22 l6 6 l11 -12" fill="none" stroke="#fff" strokeWidth={4} strokeLinecap="round" strokeLinejoin="round" />
    </g>
  );
}

function Cross() {
  return (
    <g>
      <circle cx={82} cy={18} r={14} fill="#c62828" />
      <path d="M76 12 l12 12 M88 12 l-12 12" stroke="#fff" strokeWidth={4} strokeLinecap="round" />
    </g>
  );
}

/** Face-on: the tread fills the camera's frame, grooves running up and down. */
function FaceOn() {
  const corner = (d: string) => <path d={d} fill="none" stroke="#0b5cad" strokeWidth={6} strokeLinecap="round" />;
  return (
    <svg viewBox="0 0 200 170" role="img" aria-label="The tread seen straight on, filling the camera frame from edge to edge">
      <rect width={200} height={170} rx={10} fill="#eef3f9" />
      <Tread x={34} y={26} w={132} h={124} />
      {corner('M24 40 V16 H48')}
      {corner('M152 16 H176 V40')}
      {corner('M24 136 V160 H48')}
      {corner('M152 160 H176 V136')}
      <Tick />
    </svg>
  );
}

/** Close: the camera a hand's width from the tread, pointing straight at it. */
function Close() {
  return (
    <svg viewBox="0 0 200 170" role="img" aria-label="Seen from the side: the phone held about 20 centimetres from the tread, pointing straight at it">
      <rect width={200} height={170} rx={10} fill="#eef3f9" />
      {/* the tire from the side, cut by the picture's edge: its tread is the curve facing the phone */}
      <path d="M190 0 A110 110 0 0 0 190 170 L200 170 L200 0 Z" fill="#2b2f36" />
      <path d="M200 49 A70 70 0 0 0 200 121 Z" fill="#9aa3ae" />
      {/* the phone, lens towards the tread */}
      <rect x={22} y={52} width={20} height={66} rx={5} fill="#16181d" />
      <circle cx={42} cy={85} r={4} fill="#26e0ff" />
      <path d="M46 85 L146 62 M46 85 L146 108" stroke="#0b5cad" strokeWidth={2} strokeDasharray="5 4" fill="none" />
      <path d="M48 140 H146" stroke="#16181d" strokeWidth={2} />
      <path d="M48 140 l8 -5 v10 z M146 140 l-8 -5 v10 z" fill="#16181d" />
      <text x={97} y={160} textAnchor="middle" fontSize={16} fontWeight={700} fill="#16181d">
        20 cm
      </text>
      <Tick />
    </svg>
  );
}

/** In light: a work light or the flash on the tread, no shadow of the wheel arch across it. */
function InLight() {
  return (
    <svg viewBox="0 0 200 170" role="img" aria-label="A lamp lighting the tread evenly">
      <rect width={200} height={170} rx={10} fill="#eef3f9" />
      <Tread x={44} y={70} w={112} h={86} lit />
      <circle cx={100} cy={30} r={16} fill="#f2c230" stroke="#9a5b00" strokeWidth={2} />
      <rect x={93} y={6} width={14} height={8} rx={2} fill="#5b6270" />
      <g stroke="#f2a900" strokeWidth={4} strokeLinecap="round">
        <path d="M72 44 l-12 10" />
        <path d="M100 52 v12" />
        <path d="M128 44 l12 10" />
        <path d="M66 26 h-14" />
        <path d="M134 26 h14" />
      </g>
      <Tick />
    </svg>
  );
}

/** The side of a wheel: rim and sidewall, no tread to read. */
function SideOfWheel() {
  return (
    <svg viewBox="0 0 100 80" aria-hidden="true">
      <circle cx={46} cy={44} r={32} fill="#2b2f36" />
      <circle cx={46} cy={44} r={19} fill="#c9ced6" />
      {[0, 72, 144, 216, 288].map((a) => (
        <path key={a} d="M46 44 l0 -17" stroke="#7b838f" strokeWidth={4} transform={`rotate(${a} 46 44)`} />
      ))}
      <Cross />
    </svg>
  );
}

function WholeCar() {
  return (
    <svg viewBox="0 0 100 80" aria-hidden="true">
      <path d="M8 56 v-12 l12 -4 l12 -14 h30 l14 14 l14 4 v12 z" fill="#5b6270" />
      <circle cx={28} cy={58} r={9} fill="#2b2f36" />
      <circle cx={74} cy={58} r={9} fill="#2b2f36" />
      <Cross />
    </svg>
  );
}

function BlurredOrDark() {
  const blur = useId();
  return (
    <svg viewBox="0 0 100 80" aria-hidden="true">
      <defs>
        <filter id={blur}>
          <feGaussianBlur stdDeviation="3" />
        </filter>
      </defs>
      <g filter={`url("#${blur}")`} opacity={0.85}>
        <rect x={14} y={16} width={60} height={56} rx={4} fill="#1e2126" />
        <rect x={30} y={16} width={6} height={56} fill="#000" />
        <rect x={52} y={16} width={6} height={56} fill="#000" />
      </g>
      <Cross />
    </svg>
  );
}

/** `compact`: the three "do" pictures only (the webcam's frame already shows the rest). */
export function CaptureGuide({ compact = false }: { compact?: boolean }) {
  return (
    <section className="capture-guide" aria-label="How to photograph a tread">
      <h4>How to photograph a tread</h4>
      <ol className="capture-do">
        <li>
          <FaceOn />
          <span>
            <strong>Face-on.</strong> The tread fills the photo, grooves running up and down, across the whole width.
          </span>
        </li>
        <li>
          <Close />
          <span>
            <strong>Close.</strong> About 20 cm (8 in) from the tread, camera square to it, held still until it is sharp.
          </span>
        </li>
        <li>
          <InLight />
          <span>
            <strong>In light.</strong> A work light or the flash on the tread, no shadow of the wheel arch across it.
          </span>
        </li>
      </ol>
      {!compact && (
        <>
          <p className="capture-dont-title">Not like this:</p>
          <ul className="capture-dont">
            <li>
              <SideOfWheel />
              <span>the side of the wheel</span>
            </li>
            <li>
              <WholeCar />
              <span>the whole car</span>
            </li>
            <li>
              <BlurredOrDark />
              <span>blurred, far or dark</span>
            </li>
          </ul>
        </>
      )}
    </section>
  );
}
