import { parseRfc3339Micros } from '@castlog/domain';

/** RFC 822 (and RFC 2822) date-time as RSS writes `pubDate`: an optional day name, day, month name,
 * two- or four-digit year, hh:mm[:ss] and a zone. Month names may be spelled out (`June`), the comma
 * may be missing, the zone too (read as UTC). */
const RFC_822 =
  /^(?:[a-z]{3,9}\.?,?\s*)?(\d{1,2})\s+([a-z]{3,9})\.?,?\s+(\d{4}|\d{2}),?\s+(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\.\d{1,9})?\s*(?:([a-z]{1,5})|([+-])(\d{2}):?(\d{2}))?$/i;

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** RFC 822's zone names and the few others feeds write, as hours from UTC. A name not listed reads
 * as UTC: the date is then off by hours at most, which is still the episode's day. */
const ZONES: Readonly<Record<string, number>> = {
  ut: 0,
  utc: 0,
  gmt: 0,
  z: 0,
  est: -5,
  edt: -4,
  cst: -6,
  cdt: -5,
  mst: -7,
  mdt: -6,
  pst: -8,
  pdt: -7,
  bst: 1,
  cet: 1,
  cest: 2,
};

/** Longer text is no date either format writes; it is not scanned. */
const MAX_DATE_LENGTH = 64;

/** The instant a feed's date names: RFC 822 as RSS specifies, or RFC 3339 as Atom specifies (and
 * many RSS feeds write anyway); undefined when it is neither or names no real day. */
export function parseFeedDate(text: string): Date | undefined {
  const trimmed = text.trim();
  if (trimmed.length > MAX_DATE_LENGTH) return undefined;
  const rfc822 = parseRfc822(trimmed);
  if (rfc822 !== undefined) return rfc822;
  const micros = parseRfc3339Micros(trimmed);
  return micros === undefined ? undefined : new Date(Math.floor(micros / 1000));
}

function parseRfc822(text: string): Date | undefined {
  const parts = RFC_822.exec(text);
  if (parts === null) return undefined;
  const [
    ,
    dayText,
    monthName,
    yearText,
    hourText,
    minuteText,
    secondText,
    zoneName,
    sign,
    zoneHours,
    zoneMinutes,
  ] = parts;
  const month = MONTHS.indexOf(monthName.slice(0, 3).toLowerCase());
  // RFC 2822: a two-digit year 00-49 is 2000-2049, 50-99 is 1950-1999.
  const shortYear = Number(yearText);
  const year = yearText.length === 4 ? shortYear : shortYear < 50 ? 2000 + shortYear : 1900 + shortYear;
  const [day, hour, minute, second] = [dayText, hourText, minuteText, secondText ?? '0'].map(Number);
  const daysInMonth = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  if (month < 0 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 60) return undefined;
  const offsetMinutes =
    sign === undefined
      ? (ZONES[(zoneName ?? 'z').toLowerCase()] ?? 0) * 60
      : (sign === '-' ? -1 : 1) * (Number(zoneHours) * 60 + Number(zoneMinutes));
  return new Date(Date.UTC(year, month, day, hour, minute, second) - offsetMinutes * 60_000);
}
