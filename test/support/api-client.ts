import type { RecordedResponse } from './openapi-check';

export interface ApiResponse<T = any> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: T;
  readonly text: string;
}

/** A small HTTP client over fetch: JSON in, JSON (or text) out, never throws on a status. */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly authorization?: string,
    private readonly record?: (response: RecordedResponse) => void,
  ) {}

  withAuthorization(authorization: string | undefined): ApiClient {
    return new ApiClient(this.baseUrl, authorization, this.record);
  }

  async request<T = any>(
    method: string,
    path: string,
    options: { body?: unknown; rawBody?: string | Uint8Array; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (this.authorization && !('authorization' in headers)) headers.authorization = this.authorization;
    let payload: string | Uint8Array | undefined = options.rawBody;
    if (options.body !== undefined) {
      payload = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    } else if (payload !== undefined) {
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(new URL(path, this.baseUrl), { method, headers, body: payload });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = text.length > 0 ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    const mediaType = response.headers.get('content-type')?.split(';')[0]?.trim();
    this.record?.({ method, path, status: response.status, body, ...(mediaType ? { mediaType } : {}) });
    return { status: response.status, headers: response.headers, body: body as T, text };
  }

  get<T = any>(path: string, headers?: Record<string, string>) {
    return this.request<T>('GET', path, { headers });
  }
  post<T = any>(path: string, body: unknown, headers?: Record<string, string>) {
    return this.request<T>('POST', path, { body, headers });
  }
  patch<T = any>(path: string, body: unknown) {
    return this.request<T>('PATCH', path, { body });
  }
  delete<T = any>(path: string) {
    return this.request<T>('DELETE', path);
  }
}
