/** An absolute link to `path` under `baseUrl` (PUBLIC_URL, else the request's origin) carrying the
 * request's query parameters as it sent them, in its order, every one of them (the sync draft's
 * links keep the parameters castlog does not read too), except those `replace` names: each takes
 * the value given there, in the place it had (at the end when the request had none), or is left
 * out when that value is undefined. `query` is the request's query as Fastify parsed it: a string,
 * or an array of strings for a parameter given more than once. */
export function linkTo(
  baseUrl: string,
  path: string,
  query: Record<string, unknown>,
  replace: Record<string, string | undefined>,
): string {
  const params = new URLSearchParams();
  const placed = new Set<string>();
  const place = (name: string) => {
    const value = replace[name];
    if (value !== undefined && !placed.has(name)) params.append(name, value);
    placed.add(name);
  };
  for (const [name, value] of Object.entries(query)) {
    if (Object.hasOwn(replace, name)) place(name);
    else
      for (const item of Array.isArray(value) ? value : [value])
        if (typeof item === 'string') params.append(name, item);
  }
  for (const name of Object.keys(replace)) place(name);
  const search = params.toString();
  return `${baseUrl}${path}${search === '' ? '' : `?${search}`}`;
}
