/**
 * PartHeaderCheck against busboy itself: for each header block (well-formed, missing, attachment,
 * folded in every place, bare CR/LF, junk lines, too many pairs), fed in pieces of every size,
 * the check names a problem exactly when busboy skips the part, and never refuses one it reads.
 */
import { Busboy } from '@fastify/busboy';
import { describe, expect, it } from 'vitest';
import { PartHeaderCheck, boundaryOf } from '../../src/core/http/part-headers.js';

const HEADER_PAIRS = 20;

/** The names busboy hands over for the form (empty when it skipped every part). */
function busboyReads(body: Buffer): Promise<string[]> {
  return new Promise((resolve) => {
    const parser = new Busboy({ headers: { 'content-type': 'multipart/form-data; boundary=XYZ' }, limits: { headerPairs: HEADER_PAIRS } });
    const seen: string[] = [];
    parser.on('file', (name, file) => {
      seen.push(`file ${name}`);
      file.resume();
    });
    parser.on('field', (name) => seen.push(`field ${name}`));
    parser.on('finish', () => resolve(seen));
    parser.on('error', () => resolve(seen));
    parser.end(body);
  });
}

function check(body: Buffer, piece: number): string | null {
  const guard = new PartHeaderCheck('XYZ', HEADER_PAIRS);
  for (let at = 0; at < body.length; at += piece) {
    const problem = guard.push(body.subarray(at, at + piece));
    if (problem) return problem;
  }
  return null;
}

const HEADERS = [
  'Content-Disposition: form-data; name="image"; filename="tire.jpg"\r\nContent-Type: image/jpeg\r\n',
  'content-disposition: FORM-DATA; name="image"\r\n',
  'Content-Disposition: "form-data"; name="image"\r\n',
  'Content-Disposition:form-data;name=image\r\n',
  'Content-Disposition: form-data\r\n',
  'Content-Disposition: form-data ; name="image"\r\n',
  'Content-Disposition: form-data;\r\n\tname="image"\r\n',
  'Content-Disposition:\r\n form-data; name="image"\r\n',
  'Content-Disposition: form\r\n -data; name="image"\r\n',
  'Content-Disposition: form-data; name="image"\r\nContent-Disposition: attachment\r\n',
  '',
  'Content-Type: image/jpeg\r\n',
  'Content-Disposition: attachment\r\n',
  'Content-Disposition: attachment; name="image"\r\n',
  'Content-Disposition: attachment\r\nContent-Disposition: form-data; name="image"\r\n',
  'Content-Disposition:\r\n form-data\r\n',
  'Content-Disposition: form-data\t\r\n',
  ' Content-Disposition: form-data; name="image"\r\n',
  '\tContent-Disposition: form-data; name="image"\r\n',
  'X-Note: a\r\n Content-Disposition: form-data; name="image"\r\n',
  'Garbage\r\nContent-Disposition: form-data; name="image"\r\n',
  'Content-Disposition: form-data; name="im\rage"\r\n',
  'Content-Type: a\nb\r\nContent-Disposition: form-data; name="image"\r\n',
  `${Array.from({ length: HEADER_PAIRS + 1 }, (_, i) => `X-${i}: 1\r\n`).join('')}Content-Disposition: form-data; name="image"\r\n`,
];

describe('PartHeaderCheck reads part headers as busboy does', () => {
  for (const padding of ['\r\n', '  \r\n', '\r\n\r\n']) {
    it.each(HEADERS)(`after "--XYZ${JSON.stringify(padding).slice(1, -1)}": %j`, async (headers) => {
      const body = Buffer.concat([
        Buffer.from(`preamble\r\n--XYZ${padding}${headers}\r\n`, 'latin1'),
        Buffer.alloc(100, 0x41),
        Buffer.from('\r\n--XYZ--\r\nepilogue'),
      ]);
      const skipped = (await busboyReads(body)).length === 0;
      for (const piece of [1, 3, 7, 64, body.length]) {
        const problem = check(body, piece);
        expect({ piece, refused: problem !== null }).toEqual({ piece, refused: skipped });
        if (problem)
          expect(problem).toMatch(
            /^Part 1 of the form (has no Content-Disposition header|is Content-Disposition ".*"( \(folded onto a second line\))?, not form-data)/,
          );
      }
    });
  }

  it('names the part: the second of a form whose first part is well-formed', () => {
    const body = Buffer.from(
      '--XYZ\r\nContent-Disposition: form-data; name="vehicle"\r\n\r\nVW\r\n--XYZ\r\nContent-Disposition: attachment\r\n\r\nxx\r\n--XYZ--\r\n',
    );
    expect(check(body, 5)).toBe(
      'Part 2 of the form is Content-Disposition "attachment", not form-data; each part needs "Content-Disposition: form-data; name=…" on one line (the photo in name="image")',
    );
  });

  it('takes the boundary from the Content-Type, quoted or not', () => {
    expect(boundaryOf('multipart/form-data; boundary=XYZ')).toBe('XYZ');
    expect(boundaryOf('multipart/form-data; charset=utf-8; boundary="a b;c"')).toBe('a b;c');
    expect(boundaryOf('multipart/form-data')).toBeNull();
  });
});
