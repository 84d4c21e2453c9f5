import type { IncomingMessage } from 'node:http';
import { promisify, types } from 'node:util';
import zlib from 'node:zlib';
import { FetchFailure } from './fetch-failure';

type Decoder = (body: Buffer, options: { maxOutputLength: number }) => Promise<Buffer>;

const gunzip: Decoder = promisify(zlib.gunzip);
const inflate: Decoder = promisify(zlib.inflate);
const inflateRaw: Decoder = promisify(zlib.inflateRaw);

/** "deflate" is meant as zlib-wrapped data (RFC 9110), but some servers send it raw; the header tells. */
const inflateEither: Decoder = (body, options) => (hasZlibHeader(body) ? inflate : inflateRaw)(body, options);

const hasZlibHeader = (body: Buffer): boolean =>
  body.length >= 2 && (body[0] & 0x0f) === 8 && ((body[0] << 8) | body[1]) % 31 === 0;

/** The content codings the fetcher asks for in Accept-Encoding, and how each is decoded. */
const DECODERS: ReadonlyMap<string, Decoder> = new Map([
  ['gzip', gunzip],
  ['x-gzip', gunzip],
  ['deflate', inflateEither],
  ['br', promisify(zlib.brotliDecompress) as Decoder],
]);

export const ACCEPT_ENCODING = 'gzip, deflate, br';

/**
 * The response's body, decoded, at most `maxBytes` long both as sent and once decoded. A declared
 * Content-Length over the limit is refused before reading; otherwise reading stops at the first byte
 * over it. Throws `FetchFailure` ('too-large', or 'http-error' for a body that cannot be decoded);
 * a broken connection surfaces as the stream's own error.
 */
export async function readBody(response: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(response.headers['content-length']);
  if (declared > maxBytes) {
    response.destroy();
    throw new FetchFailure('too-large', `Content-Length ${declared} is over the limit of ${maxBytes} bytes`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    size += chunk.length;
    // Leaving the loop by a throw destroys the response, and with it the connection.
    if (size > maxBytes) throw new FetchFailure('too-large', `body over the limit of ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  if (!response.complete) {
    const error: NodeJS.ErrnoException = new Error('the connection closed before the whole body arrived');
    error.code = 'ECONNRESET';
    throw error;
  }
  return decode(Buffer.concat(chunks, size), response.headers['content-encoding'], maxBytes);
}

/** Undoes each content coding, last applied first; the decoders stop as soon as `maxBytes` is passed. */
async function decode(body: Buffer, contentEncoding: string | undefined, maxBytes: number): Promise<Buffer> {
  const codings = (contentEncoding ?? '')
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  let decoded = body;
  for (const coding of codings.reverse()) {
    if (decoded.length === 0) break;
    const decoder = DECODERS.get(coding);
    if (!decoder) throw new FetchFailure('http-error', `unsupported Content-Encoding "${coding}"`);
    decoded = await decoder(decoded, { maxOutputLength: maxBytes }).catch((error: unknown) => {
      throw decodingFailure(error, coding, maxBytes);
    });
  }
  return decoded;
}

function decodingFailure(error: unknown, coding: string, maxBytes: number): FetchFailure {
  if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
    return new FetchFailure('too-large', `body over the limit of ${maxBytes} bytes once ${coding}-decoded`);
  }
  const reason = types.isNativeError(error) ? error.message : String(error);
  return new FetchFailure('http-error', `the ${coding} body could not be decoded (${reason})`);
}
