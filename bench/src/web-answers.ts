/** What the web scenario checks once before it measures: both sides must answer the page the
 * comparison assumes, else their times would compare something else (a sign-in page, an empty
 * list, an error). */

export interface Answer {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

/** The rows of a page's first table body (its header row is in `<thead>`). */
export function bodyRows(html: string): number {
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(html)?.[1];
  return body === undefined ? 0 : (body.match(/<tr[\s>]/g) ?? []).length;
}

const refuse = (what: string, problems: readonly string[]): void => {
  if (problems.length > 0) throw new Error(`web: ${what}: ${problems.join('; ')}`);
};

/** GET /web/subscriptions: an HTML page of `rows` rows that counts `total` podcasts. */
export function checkSubscriptionsPage(answer: Answer, expected: { rows: number; total: number }): void {
  const rows = bodyRows(answer.body);
  refuse('GET /web/subscriptions', [
    ...(answer.status === 200 ? [] : [`answered ${answer.status}, not 200`]),
    ...(answer.contentType.startsWith('text/html')
      ? []
      : [`is ${answer.contentType || 'untyped'}, not text/html`]),
    ...(rows === expected.rows ? [] : [`lists ${rows} rows, not ${expected.rows}`]),
    ...(answer.body.includes(`<p>${expected.total} podcasts.</p>`)
      ? []
      : [`does not count ${expected.total} podcasts`]),
  ]);
}

/** GET /v1/subscriptions: a page of `subscriptions` subscriptions out of `total`. */
export function checkV1Page(answer: Answer, expected: { subscriptions: number; total: number }): void {
  let page: { total?: unknown; subscriptions?: unknown } = {};
  try {
    page = JSON.parse(answer.body) as typeof page;
  } catch {
    // reported below: no subscriptions, no total
  }
  const count = Array.isArray(page.subscriptions) ? page.subscriptions.length : 'no';
  refuse('GET /v1/subscriptions', [
    ...(answer.status === 200 ? [] : [`answered ${answer.status}, not 200`]),
    ...(count === expected.subscriptions
      ? []
      : [`holds ${count} subscriptions, not ${expected.subscriptions}`]),
    ...(page.total === expected.total ? [] : [`says total ${String(page.total)}, not ${expected.total}`]),
  ]);
}
