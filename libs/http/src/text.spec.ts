import { decodeText, TextEncodingError } from './text';

const latin1 = (text: string) => Buffer.from(text, 'latin1');

describe('decodeText', () => {
  it('reads UTF-8, with or without its byte order mark', () => {
    expect(decodeText(Buffer.from('https://caf\u00e9.example/f\u00fcr'))).toBe(
      'https://caf\u00e9.example/f\u00fcr',
    );
    expect(decodeText(Buffer.from('\ufeff[]'))).toBe('[]');
  });

  it('reads UTF-16 marked by its byte order mark, either way round', () => {
    const text = '<?xml version="1.0" encoding="UTF-16"?><opml/>';
    expect(decodeText(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]))).toBe(text);
    const bigEndian = Buffer.from(text, 'utf16le').swap16();
    expect(decodeText(Buffer.concat([Buffer.from([0xfe, 0xff]), bigEndian]))).toBe(text);
  });

  it('reads an XML document in the encoding its declaration names', () => {
    const text =
      '<?xml version="1.0" encoding="ISO-8859-1"?>\n<opml><body><outline xmlUrl="https://a.example/f\u00fcr"/></body></opml>';
    expect(decodeText(latin1(text))).toBe(text);
    const single = "<?xml version='1.0' encoding='windows-1252'?><opml/>";
    expect(decodeText(latin1(single))).toBe(single);
  });

  it('reads a declaration of UTF-16 or UTF-32 without a byte order mark as the UTF-8 it is written in', () => {
    for (const encoding of ['utf-16', 'UTF-16LE', 'utf-32', 'ucs-2']) {
      const text = `<?xml version="1.0" encoding="${encoding}"?>\n<opml><body><outline xmlUrl="https://a.example/f\u00fcr"/></body></opml>`;
      expect(decodeText(Buffer.from(text))).toBe(text);
      expect(decodeText(Buffer.from(`${text} `))).toBe(`${text} `);
    }
  });

  it('refuses what is not UTF-8 and declares nothing, rather than replacing characters', () => {
    expect(() => decodeText(latin1('https://l.example/\u00e9'))).toThrow(
      new TextEncodingError('the text is not UTF-8 (an XML document in another encoding must declare it)'),
    );
    expect(() => decodeText(latin1('<?xml version="1.0"?><opml title="\u00e9"/>'))).toThrow(
      TextEncodingError,
    );
  });

  it('refuses an encoding it cannot read, or bytes that are not valid in the one declared', () => {
    expect(() => decodeText(Buffer.from('<?xml version="1.0" encoding="x-bogus"?><opml/>'))).toThrow(
      'the document declares the encoding x-bogus, which castlog cannot read',
    );
    expect(() => decodeText(Buffer.from([0xff, 0xfe, 0x00, 0xd8]))).toThrow('the text is not valid utf-16le');
  });
});
