/** The encoding of a feed's bytes and their text, found the way XML readers find it: a byte order
 * mark first, then UTF-16's own shape, then the HTTP charset and the XML declaration's `encoding`. */

/** The byte order marks `TextDecoder` knows, longest first. */
const BYTE_ORDER_MARKS: readonly { readonly bytes: readonly number[]; readonly encoding: string }[] = [
  { bytes: [0xef, 0xbb, 0xbf], encoding: 'utf-8' },
  { bytes: [0xfe, 0xff], encoding: 'utf-16be' },
  { bytes: [0xff, 0xfe], encoding: 'utf-16le' },
];

/** The XML declaration's `encoding`, read from the first bytes as ASCII (it must come first). */
const DECLARED_ENCODING = /^\s*<\?xml\s[^>]*?\bencoding\s*=\s*["']([A-Za-z][A-Za-z0-9._:-]{0,39})["']/;
/** How far into the document the declaration is looked for. */
const DECLARATION_BYTES = 256;
/** A Content-Type's `charset` parameter, quoted or not. */
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]{1,40})"?/i;

/** The document's text. A byte order mark decides; without one, `<` followed or preceded by a zero
 * byte is UTF-16 without a mark; otherwise the text is ASCII-compatible and its encoding is the
 * Content-Type charset or the declaration's (UTF-8 when it names none, as XML says). When the two
 * disagree, a body that is valid UTF-8 is UTF-8 when either says so (valid UTF-8 is almost never
 * another encoding's text by accident, while servers often send a default charset that is wrong);
 * otherwise the HTTP charset wins, as RFC 7303 says. Bytes the encoding cannot map become U+FFFD. */
export function decodeFeed(body: Uint8Array, contentType?: string): string {
  const marked = BYTE_ORDER_MARKS.find(({ bytes }) => bytes.every((byte, index) => body[index] === byte));
  if (marked !== undefined) return new TextDecoder(marked.encoding).decode(body);
  if (body[0] === 0x3c && body[1] === 0x00) return new TextDecoder('utf-16le').decode(body);
  if (body[0] === 0x00 && body[1] === 0x3c) return new TextDecoder('utf-16be').decode(body);

  const sent = asciiCompatible(contentType === undefined ? undefined : CHARSET.exec(contentType)?.[1]);
  const declared = asciiCompatible(declaredEncoding(body)) ?? 'utf-8';
  if (sent === undefined || sent === declared) return new TextDecoder(declared).decode(body);
  if (sent === 'utf-8' || declared === 'utf-8') {
    const text = strictUtf8(body);
    if (text !== undefined) return text;
    return new TextDecoder(sent === 'utf-8' ? declared : sent).decode(body);
  }
  return new TextDecoder(sent).decode(body);
}

function declaredEncoding(body: Uint8Array): string | undefined {
  const head = new TextDecoder('windows-1252').decode(body.subarray(0, DECLARATION_BYTES));
  return DECLARED_ENCODING.exec(head)?.[1];
}

/** The WHATWG name of an encoding label (`latin1` and `ISO-8859-1` are `windows-1252`), or undefined
 * when `TextDecoder` does not know it or it is a UTF-16 label, which ASCII-compatible bytes belie. */
function asciiCompatible(label: string | undefined): string | undefined {
  if (label === undefined) return undefined;
  let encoding: string;
  try {
    encoding = new TextDecoder(label).encoding;
  } catch {
    return undefined;
  }
  return encoding.startsWith('utf-16') ? undefined : encoding;
}

function strictUtf8(body: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    return undefined;
  }
}
