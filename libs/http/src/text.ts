/** The text of a document as sent (a request body, a file): UTF-8, or UTF-16 marked by its byte
 * order mark, or an XML document in the encoding its declaration names (`<?xml version="1.0"
 * encoding="ISO-8859-1"?>`, as older OPML exporters write). Anything else that is not valid UTF-8
 * is refused rather than read with replacement characters, which would change the URLs in it. */
export function decodeText(bytes: Uint8Array): string {
  const bom = byteOrderMark(bytes);
  const declared = bom === undefined ? declaredEncoding(bytes) : undefined;
  const encoding = bom ?? declared ?? 'utf-8';
  const decoder = (() => {
    try {
      return new TextDecoder(encoding, { fatal: true });
    } catch {
      throw new TextEncodingError(
        `the document declares the encoding ${encoding}, which castlog cannot read`,
      );
    }
  })();
  try {
    return decoder.decode(bytes);
  } catch {
    throw new TextEncodingError(
      declared === undefined && bom === undefined
        ? 'the text is not UTF-8 (an XML document in another encoding must declare it)'
        : `the text is not valid ${encoding}`,
    );
  }
}

/** The bytes are not text in the encoding they are read in; the message says which. */
export class TextEncodingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TextEncodingError';
  }
}

function byteOrderMark(bytes: Uint8Array): string | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  return undefined;
}

/** The encoding an XML declaration at the very start names, read as ASCII (every encoding it may
 * name without a byte order mark writes the declaration so). */
const XML_DECLARATION = /^<\?xml\s[^>]*?\bencoding\s*=\s*["']([A-Za-z][A-Za-z0-9._-]*)["']/;

/** Encodings in which a declaration cannot be read as ASCII: one that is was written in another
 * (a UTF-8 file saved from a UTF-16 string often says `encoding="utf-16"`), as XML parsers read it. */
const NOT_ASCII_COMPATIBLE = /^(utf-?16|utf-?32|ucs-?[24]|unicode|csunicode|iso-10646-ucs)/;

function declaredEncoding(bytes: Uint8Array): string | undefined {
  const start = String.fromCharCode(...bytes.subarray(0, 200));
  const declared = XML_DECLARATION.exec(start)?.[1]?.toLowerCase();
  return declared === undefined || NOT_ASCII_COMPATIBLE.test(declared) ? undefined : declared;
}
