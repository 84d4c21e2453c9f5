/** Paging and times as the pages show them. */

/** The page a `?page=` asks for: a whole number from 1; anything else is the first page. */
export function pageNumber(value: unknown): number {
  const page = typeof value === 'string' && /^[1-9][0-9]{0,5}$/.test(value) ? Number(value) : 1;
  return page;
}

export interface Pager {
  readonly page: number;
  readonly pages: number;
  readonly previous?: string;
  readonly next?: string;
}

/** Links to the neighbouring pages; `base` ends with `?` or `&`. */
export function pagerOf(base: string, page: number, total: number, perPage: number): Pager {
  const pages = Math.max(1, Math.ceil(total / perPage));
  return {
    page,
    pages,
    ...(page > 1 ? { previous: `${base}page=${Math.min(page - 1, pages)}` } : {}),
    ...(page < pages ? { next: `${base}page=${page + 1}` } : {}),
  };
}

/** An instant (epoch ms) as a `<time>` element shows it: ISO in the attribute, minutes in UTC. */
export function shownTime(instant: number): { changedIso: string; changedText: string } {
  const iso = new Date(instant).toISOString();
  return { changedIso: iso, changedText: `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` };
}
