import { bodyRows, checkSubscriptionsPage, checkV1Page } from './web-answers';

const page = (rows: number, total: number) =>
  `<p>${total} podcasts.</p><table><thead><tr><th>Podcast</th></tr></thead><tbody>\n` +
  Array.from(
    { length: rows },
    (_, i) => `      <tr>\n        <td class="podcast">${i}</td>\n      </tr>\n`,
  ).join('') +
  '    </tbody></table>';

describe('the web scenario checks', () => {
  it('counts the rows of the table body, not its header', () => {
    expect(bodyRows(page(100, 5000))).toBe(100);
    expect(bodyRows(page(0, 0))).toBe(0);
    expect(bodyRows('<p>No podcasts yet</p>')).toBe(0);
    expect(bodyRows('<tbody><tr class="x"><td>a</td></tr><tr><td>b</td></tr></tbody>')).toBe(2);
  });

  it('takes the page of 100 rows out of 5,000, and refuses a sign-in page, another count or JSON', () => {
    const html = { status: 200, contentType: 'text/html; charset=utf-8' };
    const expected = { rows: 100, total: 5000 };
    expect(() => checkSubscriptionsPage({ ...html, body: page(100, 5000) }, expected)).not.toThrow();
    expect(() => checkSubscriptionsPage({ ...html, status: 303, body: '' }, expected)).toThrow(
      'answered 303, not 200',
    );
    expect(() => checkSubscriptionsPage({ ...html, body: page(50, 5000) }, expected)).toThrow(
      'lists 50 rows, not 100',
    );
    expect(() => checkSubscriptionsPage({ ...html, body: page(100, 4000) }, expected)).toThrow(
      'does not count 5000 podcasts',
    );
    expect(() =>
      checkSubscriptionsPage({ ...html, contentType: 'application/json', body: page(100, 5000) }, expected),
    ).toThrow('not text/html');
  });

  it('takes a /v1 page of 100 subscriptions out of 5,000, and refuses anything else', () => {
    const answer = (subscriptions: number, total: number) => ({
      status: 200,
      contentType: 'application/json; charset=utf-8',
      body: JSON.stringify({ total, page: 1, per_page: 100, subscriptions: Array(subscriptions).fill({}) }),
    });
    const expected = { subscriptions: 100, total: 5000 };
    expect(() => checkV1Page(answer(100, 5000), expected)).not.toThrow();
    expect(() => checkV1Page(answer(50, 5000), expected)).toThrow('holds 50 subscriptions, not 100');
    expect(() => checkV1Page(answer(100, 100), expected)).toThrow('says total 100, not 5000');
    expect(() => checkV1Page({ ...answer(100, 5000), status: 401, body: 'no' }, expected)).toThrow(
      /answered 401.*holds no subscriptions/,
    );
  });
});
