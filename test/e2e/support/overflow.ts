/** What a narrow window (320 px: 400 % zoom) shows sideways: for the reflow checks of WCAG 1.4.10. */
import type { Page } from 'playwright-core';

export interface SidewaysOverflow {
  /** How far the page scrolls sideways, in px (0: not at all). */
  extra: number;
  /** Up to five elements sticking out past the window's right edge (tables, which may scroll, aside). */
  out: string[];
}

/** The page's sideways overflow and the elements sticking out past the window's right edge. */
export function sidewaysOverflow(page: Page): Promise<SidewaysOverflow> {
  return page.evaluate(() => {
    // Runs in the page; the Node typings of this file have no DOM.
    interface El {
      tagName: string;
      className: unknown;
      closest(s: string): unknown;
      getBoundingClientRect(): { right: number; width: number };
    }
    const doc = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number }; querySelectorAll(s: string): El[] } })
      .document;
    const width = doc.documentElement.clientWidth;
    const out = [...doc.querySelectorAll('main *, header *')]
      .filter(
        (el) =>
          !el.closest('table, .table-scroll, .sr-only, .skip-link') && el.getBoundingClientRect().right > width + 1 && el.getBoundingClientRect().width > 0,
      )
      .slice(0, 5)
      .map((el) => `${el.tagName.toLowerCase()}.${String(el.className)}`);
    return { extra: doc.documentElement.scrollWidth - width, out };
  });
}
