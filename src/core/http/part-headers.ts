/**
 * busboy (@fastify/busboy 3.2.6, the newest) skips a form part whose headers carry no
 * `Content-Disposition: form-data` (none, `attachment`, or one lost to a folded line) without an
 * event, and when that part's last piece is 16 KiB or more it never finishes at all: no 'finish',
 * no 'error' (the skipped part ends while its parser waits for it to be read). POST /analyze
 * watches the body go past with PartHeaderCheck and refuses such a part by name, at once.
 *
 * The headers are read exactly as busboy reads them (its HeaderParser and parseParams), so a part
 * busboy takes is never refused here; what busboy would skip is named. A header block longer than
 * busboy's own limit (80 KiB) is not judged: the route's parse deadline still answers it.
 */

const HEADER_BLOCK_LIMIT = 80 * 1024;
const CRLF2 = Buffer.from('\r\n\r\n');

/** The boundary of a multipart Content-Type (quoted or not), or null. */
export function boundaryOf(contentType: string): string | null {
  const match = /;\s*boundary\s*=\s*(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return match ? (match[1] ?? match[2]!) : null;
}

/** The disposition type as busboy's parseParams reads it: unquoted blanks dropped, quotes removed. */
function dispositionType(value: string): string {
  if (!value.includes(';')) return value;
  let out = '';
  let inQuote = false;
  let escaping = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c === '\\' && inQuote) {
      if (!escaping) {
        escaping = true;
        continue;
      }
      escaping = false;
    } else if (c === '"') {
      if (!escaping) {
        if (inQuote) {
          inQuote = false;
          while (i + 1 < value.length && value[i + 1] !== ';') i++;
        } else inQuote = true;
        continue;
      }
      escaping = false;
    } else {
      if (escaping && inQuote) out += '\\';
      escaping = false;
      if (!inQuote && c === ';') return out;
      if (!inQuote && (c === ' ' || c === '\t')) continue;
    }
    out += c;
  }
  return out;
}

const shown = (text: string) => JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);

/**
 * What is wrong with part `index`'s header block (the bytes between its boundary line and the
 * blank line), or null when busboy would take it. `maxPairs` is the form's headerPairs limit.
 */
export function partHeaderProblem(block: string, index: number, maxPairs: number): string | null {
  const headers = new Map<string, string[]>();
  let name: string | undefined;
  let why = '';
  let pairs = 0;
  for (let start = 0; start < block.length;) {
    let end = block.indexOf('\r\n', start);
    if (end === -1) end = block.length;
    const line = block.slice(start, end);
    start = end + 2;
    if (line === '') continue;
    if (/[\r\n]/.test(line)) {
      why = 'a header line holds a bare CR or LF';
      break;
    }
    if ((line[0] === ' ' || line[0] === '\t') && name !== undefined) {
      const values = headers.get(name)!;
      values[values.length - 1] += line;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) {
      why =
        line[0] === ' ' || line[0] === '\t'
          ? 'its first line starts with a space or tab: a folded line with nothing before it'
          : `the line ${shown(line)} is not a header`;
      break;
    }
    name = line.slice(0, colon).toLowerCase();
    if (name !== name.trimStart()) why ||= `its "${name.trim()}" line starts with a space or tab, which folds it onto nothing`;
    const value = line.slice(colon + 1 + (line[colon + 1] === ' ' || line[colon + 1] === '\t' ? 1 : 0));
    headers.set(name, [...(headers.get(name) ?? []), value]);
    if (++pairs === maxPairs) break;
  }
  const part = `Part ${index} of the form`;
  const wanted = 'each part needs "Content-Disposition: form-data; name=…" on one line (the photo in name="image")';
  const disposition = headers.get('content-disposition')?.[0];
  if (disposition === undefined) return `${part} has no Content-Disposition header${why ? ` (${why})` : ''}; ${wanted}`;
  const type = dispositionType(disposition);
  if (/^form-data$/i.test(type)) return null;
  const folded = /^[ \t]/.test(type) && /^form-data$/i.test(type.trim()) ? ' (folded onto a second line)' : '';
  return `${part} is Content-Disposition ${shown(type)}${folded}, not form-data; ${wanted}`;
}

/**
 * Reads a multipart body as it streams, part header blocks only (a few bytes kept between
 * chunks), and says what is wrong with the first part busboy would skip. Framing as busboy's
 * Dicer reads it: a CRLF before the body, `\r\n--boundary`, `--` after it ends the form, a part
 * cut off by the next boundary before its blank line is no part.
 */
export class PartHeaderCheck {
  private readonly delimiter: Buffer;
  private pending = Buffer.from('\r\n');
  private state: 'seek' | 'after' | 'headers' | 'done' = 'seek';
  private parts = 0;

  constructor(
    boundary: string,
    private readonly maxPairs: number,
  ) {
    this.delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  }

  /** Feeds the next piece of the body; returns the problem once found (then stops reading). */
  push(chunk: Buffer): string | null {
    if (this.state === 'done') return null;
    let data = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    for (;;) {
      if (this.state === 'seek') {
        const at = data.indexOf(this.delimiter);
        if (at === -1) return this.keep(data.subarray(Math.max(0, data.length - this.delimiter.length + 1)));
        data = data.subarray(at + this.delimiter.length);
        this.state = 'after';
      }
      if (this.state === 'after') {
        if (data.length < 2) return this.keep(data);
        if (data[0] === 0x2d && data[1] === 0x2d) return this.finish();
        this.parts++;
        this.state = 'headers';
      }
      const end = data.indexOf(CRLF2);
      const next = data.indexOf(this.delimiter);
      if (next !== -1 && (end === -1 || next < end)) {
        // no blank line before the next boundary: busboy drops this part unseen
        data = data.subarray(next + this.delimiter.length);
        this.state = 'after';
        continue;
      }
      if (end === -1) {
        if (data.length > HEADER_BLOCK_LIMIT) return this.finish();
        return this.keep(data);
      }
      const problem = partHeaderProblem(data.toString('latin1', 0, end), this.parts, this.maxPairs);
      if (problem) {
        this.finish();
        return problem;
      }
      data = data.subarray(end + CRLF2.length);
      this.state = 'seek';
    }
  }

  private keep(rest: Buffer): null {
    this.pending = Buffer.from(rest);
    return null;
  }

  private finish(): null {
    this.state = 'done';
    this.pending = Buffer.alloc(0);
    return null;
  }
}
